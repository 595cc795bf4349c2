/*
 * container.c - the C helpers behind the container classes of ffikit/container.py:
 * size, element and key access, snapshots for iteration, structural equality and hash.
 *
 * Array/Tuple/Map are read through their borrowed element storage; List/Dict through
 * their locked C accessors (every single operation is atomic in C).
 */
#include "ffikit_py.h"

static ffk_object *container_handle(PyObject *o, const char *what) {
  ffk_object *h = ffkpy_handle(o);
  if (h == NULL) PyErr_Format(PyExc_TypeError, "%s: expected an ffikit container, got %.200s", what, Py_TYPE(o)->tp_name);
  return h;
}

static PyObject *seq_len(PyObject *mod, PyObject *o) {
  (void)mod;
  ffk_object *h = container_handle(o, "len");
  if (h == NULL) return NULL;
  switch (h->type_index) {
    case FFK_TYPE_ARRAY:
    case FFK_TYPE_TUPLE:
      return PyLong_FromLongLong(ffk_array_size((ffk_array *)h));
    case FFK_TYPE_LIST:
      return PyLong_FromLongLong(ffk_list_size((ffk_list *)h));
    case FFK_TYPE_MAP:
      return PyLong_FromLongLong(ffk_map_size((ffk_map *)h));
    case FFK_TYPE_DICT:
      return PyLong_FromLongLong(ffk_dict_size((ffk_dict *)h));
    default:
      return PyErr_Format(PyExc_TypeError, "object of type %s has no len()", ffk_type_name(h->type_index));
  }
}

static PyObject *seq_get(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o;
  long long i;
  if (!PyArg_ParseTuple(args, "OL:_seq_get", &o, &i)) return NULL;
  ffk_object *h = container_handle(o, "getitem");
  if (h == NULL) return NULL;
  ffk_any v;
  int rc;
  if (h->type_index == FFK_TYPE_ARRAY || h->type_index == FFK_TYPE_TUPLE)
    rc = ffk_array_get((ffk_array *)h, i, &v);
  else if (h->type_index == FFK_TYPE_LIST)
    rc = ffk_list_get((ffk_list *)h, i, &v);
  else
    return PyErr_Format(PyExc_TypeError, "%s is not a sequence", ffk_type_name(h->type_index));
  if (rc != 0) return ffkpy_raise_from_ffk();
  return ffkpy_from_any_steal(&v);
}

static PyObject *map_get(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o, *key, *dflt = NULL;
  if (!PyArg_ParseTuple(args, "OO|O:_map_get", &o, &key, &dflt)) return NULL;
  ffk_object *h = container_handle(o, "getitem");
  if (h == NULL) return NULL;
  ffkpy_temps temps;
  ffkpy_temps_init(&temps);
  ffk_any k, v;
  if (ffkpy_to_any(key, &k, &temps) != 0) {
    ffkpy_temps_release(&temps);
    return NULL;
  }
  int rc;
  if (h->type_index == FFK_TYPE_MAP)
    rc = ffk_map_get((ffk_map *)h, &k, &v);
  else if (h->type_index == FFK_TYPE_DICT)
    rc = ffk_dict_get((ffk_dict *)h, &k, &v);
  else
    rc = -2;
  ffkpy_temps_release(&temps);
  if (rc == -2) return PyErr_Format(PyExc_TypeError, "%s is not a mapping", ffk_type_name(h->type_index));
  if (rc < 0) return ffkpy_raise_from_ffk();
  if (rc == 0) {
    if (dflt != NULL) return Py_NewRef(dflt);
    PyErr_SetObject(PyExc_KeyError, key);
    return NULL;
  }
  return ffkpy_from_any_steal(&v);
}

/* A snapshot Array of a container's elements (keys/values/items for maps: which 0/1/2). */
static ffk_array *snapshot(ffk_object *h, int which) {
  switch (h->type_index) {
    case FFK_TYPE_ARRAY:
    case FFK_TYPE_TUPLE:
      ffk_object_retain(h);
      return (ffk_array *)h;
    case FFK_TYPE_LIST:
      return ffk_list_to_array((ffk_list *)h);
    case FFK_TYPE_MAP:
      return which == 0 ? ffk_map_keys((ffk_map *)h) : which == 1 ? ffk_map_values((ffk_map *)h) : ffk_map_items((ffk_map *)h);
    case FFK_TYPE_DICT:
      return which == 0 ? ffk_dict_keys((ffk_dict *)h) : which == 1 ? ffk_dict_values((ffk_dict *)h)
                                                                      : ffk_dict_items((ffk_dict *)h);
    default:
      ffk_error_set(FFK_ERR_TYPE, "%s is not a container", ffk_type_name(h->type_index));
      return NULL;
  }
}

/* _to_list(container, which=0) -> a Python list of the elements (or keys/values/items). */
static PyObject *to_list(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *o;
  int which = 0;
  if (!PyArg_ParseTuple(args, "O|i:_to_list", &o, &which)) return NULL;
  ffk_object *h = container_handle(o, "iter");
  if (h == NULL) return NULL;
  ffk_array *a = snapshot(h, which);
  if (a == NULL) return ffkpy_raise_from_ffk();
  const ffk_any *items = ffk_array_items_borrow(a);
  int64_t n = ffk_array_size(a);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (int64_t i = 0; list != NULL && i < n; ++i) {
    PyObject *x;
    if (which == 2) { /* an item is a 2-Array (key, value) */
      const ffk_array *pair = (const ffk_array *)items[i].v_obj;
      PyObject *k = ffkpy_from_any(&pair->data[0]);
      PyObject *v = k ? ffkpy_from_any(&pair->data[1]) : NULL;
      x = v ? PyTuple_Pack(2, k, v) : NULL;
      Py_XDECREF(k);
      Py_XDECREF(v);
    } else {
      x = ffkpy_from_any(&items[i]);
    }
    if (x == NULL) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, x);
  }
  ffk_object_release(&a->header);
  return list;
}

static int owned_any(PyObject *o, ffk_any *out) { return ffkpy_to_any(o, out, NULL); }

static PyObject *structural_equal(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "OO:_structural_equal", &a, &b)) return NULL;
  ffk_any x, y;
  if (owned_any(a, &x) != 0) return NULL;
  if (owned_any(b, &y) != 0) {
    ffk_any_release(&x);
    return NULL;
  }
  int rc = ffk_structural_equal(&x, &y);
  ffk_any_release(&x);
  ffk_any_release(&y);
  if (rc < 0) return ffkpy_raise_from_ffk();
  return PyBool_FromLong(rc);
}

static PyObject *structural_hash(PyObject *mod, PyObject *o) {
  (void)mod;
  ffk_any x;
  if (owned_any(o, &x) != 0) return NULL;
  uint64_t h;
  int rc = ffk_structural_hash(&x, &h);
  ffk_any_release(&x);
  if (rc != 0) return ffkpy_raise_from_ffk();
  Py_hash_t r = (Py_hash_t)h;
  return PyLong_FromSsize_t(r == -1 ? -2 : r);
}

/* _make(kind, items): a new Array (kind 0), List (1) from a sequence; Map (2), Dict (3) from pairs. */
static PyObject *make(PyObject *mod, PyObject *args) {
  (void)mod;
  int kind;
  PyObject *src;
  if (!PyArg_ParseTuple(args, "iO:_make", &kind, &src)) return NULL;
  PyObject *seq = PySequence_Fast(src, "expected a sequence");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int pairs = kind >= 2;
  ffk_any *items = PyMem_Calloc((size_t)(pairs ? 2 * n : n) + 1, sizeof(ffk_any));
  Py_ssize_t done = 0;
  ffk_object *made = NULL;
  int failed = items == NULL;
  if (failed) PyErr_NoMemory();
  for (; !failed && done < n; ++done) {
    PyObject *x = PySequence_Fast_GET_ITEM(seq, done);
    if (!pairs) {
      failed = owned_any(x, &items[done]) != 0;
    } else {
      PyObject *kv = PySequence_Fast(x, "expected (key, value) pairs");
      if (kv == NULL || PySequence_Fast_GET_SIZE(kv) != 2) {
        if (kv != NULL) PyErr_SetString(PyExc_ValueError, "expected (key, value) pairs");
        Py_XDECREF(kv);
        failed = 1;
        break;
      }
      failed = owned_any(PySequence_Fast_GET_ITEM(kv, 0), &items[done]) != 0;
      if (!failed && owned_any(PySequence_Fast_GET_ITEM(kv, 1), &items[n + done]) != 0) {
        ffk_any_release(&items[done]);
        failed = 1;
      }
      Py_DECREF(kv);
    }
    if (failed) break;
  }
  if (!failed) {
    switch (kind) {
      case 0: made = (ffk_object *)ffk_array_new(items, n); break;
      case 1: made = (ffk_object *)ffk_list_from_items(items, n); break;
      case 2: made = (ffk_object *)ffk_map_from_pairs(items, items + n, n); break;
      default: made = (ffk_object *)ffk_dict_from_pairs(items, items + n, n); break;
    }
  }
  for (Py_ssize_t i = 0; items != NULL && i < done; ++i) {
    ffk_any_release(&items[i]);
    if (pairs) ffk_any_release(&items[n + i]);
  }
  PyMem_Free(items);
  Py_DECREF(seq);
  if (failed) return NULL;
  if (made == NULL) return ffkpy_raise_from_ffk();
  return ffkpy_wrap_steal(made);
}

PyMethodDef ffkpy_container_methods[] = {
    {"_len", seq_len, METH_O, NULL},
    {"_seq_get", seq_get, METH_VARARGS, NULL},
    {"_map_get", map_get, METH_VARARGS, NULL},
    {"_to_list", to_list, METH_VARARGS, NULL},
    {"_structural_equal", structural_equal, METH_VARARGS, NULL},
    {"_structural_hash", structural_hash, METH_O, NULL},
    {"_make", make, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
