/*
 * testing_ext.c - C helpers behind ffikit.testing that the Python suite needs and that
 * only C can do: registering the testing.* globals compiled into this extension, and
 * calling a Function from a native thread that Python has never seen.
 */
#include "ffikit_py.h"

#include <pthread.h>

#include "ffi/testing/testing.h"

static PyObject *testing_register(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  if (ffk_testing_register() != 0) return ffkpy_raise_from_ffk();
  Py_RETURN_NONE;
}

static PyObject *testing_unregister(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  ffk_testing_unregister();
  Py_RETURN_NONE;
}

typedef struct {
  ffk_function *f;
  ffk_any *args;
  int32_t nargs;
  int64_t times;
  ffk_any result;
  ffk_error *error;
} native_job;

static void *native_main(void *p) {
  native_job *job = p;
  job->result = ffk_any_none();
  for (int64_t i = 0; i < job->times; ++i) {
    ffk_any_release(&job->result);
    if (ffk_function_call(job->f, job->args, job->nargs, &job->result) != 0) {
      job->error = ffk_error_fetch(); /* the slot is per thread: carry it back */
      break;
    }
  }
  return NULL;
}

/* _call_from_native_thread(f, times, *args): calls f `times` times on a new pthread, returns the last result. */
static PyObject *call_from_native_thread(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs < 2 || !PyObject_TypeCheck(args[0], &ffkpy_FunctionType))
    return PyErr_Format(PyExc_TypeError, "_call_from_native_thread(f: Function, times: int, *args)");
  long long times = PyLong_AsLongLong(args[1]);
  if (times == -1 && PyErr_Occurred()) return NULL;
  native_job job = {.f = (ffk_function *)((ffkpy_Object *)args[0])->obj, .nargs = (int32_t)(nargs - 2), .times = times};
  job.args = PyMem_Calloc((size_t)job.nargs + 1, sizeof(ffk_any));
  if (job.args == NULL) return PyErr_NoMemory();
  int32_t converted = 0;
  PyObject *r = NULL;
  for (; converted < job.nargs; ++converted)
    if (ffkpy_to_any(args[2 + converted], &job.args[converted], NULL) != 0) goto done;
  pthread_t th;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = pthread_create(&th, NULL, native_main, &job);
  if (rc == 0) pthread_join(th, NULL);
  Py_END_ALLOW_THREADS;
  if (rc != 0) {
    PyErr_Format(PyExc_RuntimeError, "pthread_create failed (%d)", rc);
    goto done;
  }
  if (job.error != NULL) {
    ffk_error_restore(job.error);
    ffkpy_raise_from_ffk();
  } else {
    r = ffkpy_from_any_steal(&job.result);
  }
done:
  for (int32_t i = 0; i < converted; ++i) ffk_any_release(&job.args[i]);
  PyMem_Free(job.args);
  return r;
}

PyMethodDef ffkpy_testing_methods[] = {
    {"_testing_register", testing_register, METH_NOARGS, NULL},
    {"_testing_unregister", testing_unregister, METH_NOARGS, NULL},
    {"_call_from_native_thread", (PyCFunction)(void (*)(void))call_from_native_thread, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};
