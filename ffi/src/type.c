/*
 * type.c - the type registry: static indices of the ABI and types registered at run time.
 *
 * Invariants:
 *  - g_types[i] is NULL or points to an entry that never moves and is never freed, so
 *    readers take no lock: an acquire load of the slot sees a complete entry
 *    (registration fills the entry, then publishes it with a release store).
 *  - Registration and key lookups serialise on g_lock; the key index is an
 *    open-addressing table of type indices, kept at most half full.
 *  - Each entry stores its ancestors from the root down, so is-instance is one
 *    comparison after a depth check.
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES (FFK_TYPE_STATIC_END + FFK_TYPE_MAX_DYNAMIC)
#define MAX_DEPTH 32
#define MAX_KEY 255

typedef struct type_entry {
  int32_t index;
  int32_t depth;                     /* 0 for roots */
  int32_t ancestors[MAX_DEPTH];      /* ancestors[0] = root ... ancestors[depth] = index */
  const char *key;
  const char *name;
  ffk_repr_fn repr;                  /* atomic access: set at any time by ffk_type_set_repr */
  ffk_convert_fn convert;            /* atomic access: set at any time by ffk_type_set_converter */
  ffk_key_hash_fn key_hash;          /* atomic access: set by ffk_type_set_key_ops, with key_equal */
  ffk_key_equal_fn key_equal;
} type_entry;

/* Static types: {index, parent, key, name}. Object types all descend from Object. */
static const struct {
  int32_t index, parent;
  const char *key, *name;
} k_static[] = {
    {FFK_TYPE_NONE, -1, "None", "None"},
    {FFK_TYPE_INT, -1, "int", "int"},
    {FFK_TYPE_BOOL, -1, "bool", "bool"},
    {FFK_TYPE_FLOAT, -1, "float", "float"},
    {FFK_TYPE_OPAQUE_PTR, -1, "void*", "ptr"},
    {FFK_TYPE_DATATYPE, -1, "DataType", "dtype"},
    {FFK_TYPE_DEVICE, -1, "Device", "Device"},
    {FFK_TYPE_DLTENSOR_PTR, -1, "DLTensor*", "DLTensor*"},
    {FFK_TYPE_RAW_STR, -1, "const char*", "str"},
    {FFK_TYPE_BYTE_ARRAY_PTR, -1, "ffk_byte_array*", "bytes"},
    {FFK_TYPE_SMALL_STR, -1, "ffikit.SmallStr", "str"},
    {FFK_TYPE_SMALL_BYTES, -1, "ffikit.SmallBytes", "bytes"},
    {FFK_TYPE_OBJECT, -1, "ffikit.Object", "Object"},
    {FFK_TYPE_STRING, FFK_TYPE_OBJECT, "ffikit.String", "str"},
    {FFK_TYPE_BYTES, FFK_TYPE_OBJECT, "ffikit.Bytes", "bytes"},
    {FFK_TYPE_ERROR, FFK_TYPE_OBJECT, "ffikit.Error", "Error"},
    {FFK_TYPE_FUNCTION, FFK_TYPE_OBJECT, "ffikit.Function", "Function"},
    {FFK_TYPE_SHAPE, FFK_TYPE_OBJECT, "ffikit.Shape", "Shape"},
    {FFK_TYPE_TENSOR, FFK_TYPE_OBJECT, "ffikit.Tensor", "Tensor"},
    {FFK_TYPE_ARRAY, FFK_TYPE_OBJECT, "ffikit.Array", "Array"},
    {FFK_TYPE_MAP, FFK_TYPE_OBJECT, "ffikit.Map", "Map"},
    {FFK_TYPE_MODULE, FFK_TYPE_OBJECT, "ffikit.Module", "Module"},
    {FFK_TYPE_OPAQUE, FFK_TYPE_OBJECT, "ffikit.Opaque", "Opaque"},
    {FFK_TYPE_LIST, FFK_TYPE_OBJECT, "ffikit.List", "List"},
    {FFK_TYPE_DICT, FFK_TYPE_OBJECT, "ffikit.Dict", "Dict"},
    {FFK_TYPE_STORAGE, FFK_TYPE_OBJECT, "ffikit.Storage", "Storage"},
    {FFK_TYPE_TUPLE, FFK_TYPE_OBJECT, "ffikit.Tuple", "Tuple"},
    {FFK_TYPE_WEAK_REF, FFK_TYPE_OBJECT, "ffikit.WeakRef", "WeakRef"},
};
#define N_STATIC ((int)(sizeof k_static / sizeof k_static[0]))

static type_entry g_static_entries[N_STATIC];
static type_entry *g_types[MAX_TYPES];
static int32_t g_next_dynamic = FFK_TYPE_STATIC_END;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/*
 * Key index: open addressing over type indices (-1 empty); guarded by g_lock. It starts
 * in static storage, so loading the library allocates nothing, and moves to the heap
 * when registrations outgrow it.
 */
#define INITIAL_KEYS 128
static int32_t g_keys_initial[INITIAL_KEYS];
static int32_t *g_keys;
static size_t g_keys_cap;
static size_t g_keys_used;

static uint64_t key_hash(const char *key) { return ffk_hash_bytes(key, strlen(key)); }

static type_entry *entry_at(int32_t index) {
  if (index < 0 || index >= MAX_TYPES) return NULL;
  return __atomic_load_n(&g_types[index], __ATOMIC_ACQUIRE);
}

/* Inserts into the key index; the caller holds g_lock and has ensured room. */
static void keys_put(int32_t index, const char *key) {
  size_t mask = g_keys_cap - 1;
  for (size_t i = key_hash(key) & mask;; i = (i + 1) & mask) {
    if (g_keys[i] < 0) {
      g_keys[i] = index;
      ++g_keys_used;
      return;
    }
  }
}

static int keys_reserve(size_t want) {
  if ((want + 1) * 2 <= g_keys_cap) return 0;
  size_t cap = g_keys_cap * 2;
  while ((want + 1) * 2 > cap) cap *= 2;
  int32_t *fresh = ffk_mem__raw_alloc(cap * sizeof *fresh);
  if (fresh == NULL) return -1; /* the caller raises */
  int32_t *old = g_keys;
  size_t old_cap = g_keys_cap;
  memset(fresh, 0xff, cap * sizeof *fresh);
  g_keys = fresh;
  g_keys_cap = cap;
  g_keys_used = 0;
  for (size_t i = 0; i < old_cap; ++i)
    if (old[i] >= 0) keys_put(old[i], g_types[old[i]]->key);
  if (old != g_keys_initial) free(old);
  return 0;
}

static int32_t keys_find(const char *key) {
  if (g_keys_cap == 0) return -1;
  size_t mask = g_keys_cap - 1;
  for (size_t i = key_hash(key) & mask; g_keys[i] >= 0; i = (i + 1) & mask)
    if (strcmp(g_types[g_keys[i]]->key, key) == 0) return g_keys[i];
  return -1;
}

static void fill_entry(type_entry *e, int32_t index, const type_entry *parent) {
  e->index = index;
  if (parent == NULL) {
    e->depth = 0;
  } else {
    e->depth = parent->depth + 1;
    memcpy(e->ancestors, parent->ancestors, sizeof(int32_t) * (size_t)parent->depth + sizeof(int32_t));
  }
  e->ancestors[e->depth] = index;
}

static void init_static(void) {
  pthread_mutex_lock(&g_lock);
  FFK_STATIC_ASSERT((N_STATIC + 1) * 2 <= INITIAL_KEYS, "static types fit the initial key index");
  memset(g_keys_initial, 0xff, sizeof g_keys_initial);
  g_keys = g_keys_initial;
  g_keys_cap = INITIAL_KEYS;
  for (int i = 0; i < N_STATIC; ++i) {
    type_entry *e = &g_static_entries[i];
    e->key = k_static[i].key;
    e->name = k_static[i].name;
    fill_entry(e, k_static[i].index, k_static[i].parent < 0 ? NULL : g_types[k_static[i].parent]);
    __atomic_store_n(&g_types[e->index], e, __ATOMIC_RELEASE);
    keys_put(e->index, e->key);
  }
  pthread_mutex_unlock(&g_lock);
}

/* The static part is ready before any user code runs; pthread_once covers constructors of other libraries. */
__attribute__((constructor)) static void type_registry_init(void) { pthread_once(&g_once, init_static); }

static inline void ensure_init(void) {
  if (FFK_UNLIKELY(__atomic_load_n(&g_types[FFK_TYPE_OBJECT], __ATOMIC_ACQUIRE) == NULL))
    pthread_once(&g_once, init_static);
}

int32_t ffk_type_register(const char *key, int32_t parent_index) {
  ensure_init();
  if (key == NULL || key[0] == '\0') {
    ffk_error_set(FFK_ERR_VALUE, "cannot register a type: the type key must be a non-empty string");
    return -1;
  }
  size_t key_len = strlen(key);
  if (key_len > MAX_KEY) {
    ffk_error_set(FFK_ERR_VALUE, "cannot register type \"%.40s...\": the key is %zu bytes, the limit is %d",
                  key, key_len, MAX_KEY);
    return -1;
  }
  const type_entry *parent = entry_at(parent_index);
  if (parent == NULL || parent_index < FFK_TYPE_OBJECT_BEGIN) {
    ffk_error_set(FFK_ERR_VALUE, "cannot register type \"%s\": its parent %d is not a registered object type", key,
                  (int)parent_index);
    return -1;
  }
  if (parent->depth + 1 >= MAX_DEPTH) {
    ffk_error_set(FFK_ERR_VALUE, "cannot register type \"%s\": it would nest deeper than %d levels", key, MAX_DEPTH);
    return -1;
  }

  pthread_mutex_lock(&g_lock);
  int32_t found = keys_find(key);
  if (found >= 0) {
    const type_entry *e = g_types[found];
    int32_t existing_parent = e->depth > 0 ? e->ancestors[e->depth - 1] : -1;
    pthread_mutex_unlock(&g_lock);
    if (existing_parent == parent_index) return found;
    ffk_error_set(FFK_ERR_VALUE, "type \"%s\" is already registered with parent %s, not %s", key,
                  ffk_type_key(existing_parent), parent->key);
    return -1;
  }
  if (g_next_dynamic >= MAX_TYPES) {
    pthread_mutex_unlock(&g_lock);
    ffk_error_set(FFK_ERR_MEMORY, "the type registry is full (%d types)", MAX_TYPES);
    return -1;
  }
  /* One block: the entry and its key. Never freed: type entries live until exit. */
  type_entry *e = ffk_mem__raw_alloc(sizeof *e + key_len + 1);
  if (e == NULL || keys_reserve(g_keys_used + 1) != 0) {
    pthread_mutex_unlock(&g_lock);
    free(e);
    ffk_error_set(FFK_ERR_MEMORY, "out of memory registering type \"%s\"", key);
    return -1;
  }
  memset(e, 0, sizeof *e);
  char *key_copy = (char *)(e + 1);
  memcpy(key_copy, key, key_len + 1);
  e->key = key_copy;
  e->name = key_copy;
  int32_t index = g_next_dynamic++;
  fill_entry(e, index, parent);
  __atomic_store_n(&g_types[index], e, __ATOMIC_RELEASE);
  keys_put(index, e->key);
  pthread_mutex_unlock(&g_lock);
  return index;
}

int ffk_type_lookup(const char *key, int32_t *out_index) {
  ensure_init();
  if (key == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_type_lookup: key is NULL");
  pthread_mutex_lock(&g_lock);
  int32_t found = keys_find(key);
  pthread_mutex_unlock(&g_lock);
  if (found < 0) return 0;
  if (out_index) *out_index = found;
  return 1;
}

bool ffk_type_exists(int32_t type_index) {
  ensure_init();
  return entry_at(type_index) != NULL;
}

int ffk_type_check_index(int32_t type_index) {
  if (ffk_type_exists(type_index)) return 0;
  return ffk_error_set(FFK_ERR_VALUE, "type index %d is not a registered type", (int)type_index);
}

const char *ffk_type_key(int32_t type_index) {
  ensure_init();
  const type_entry *e = entry_at(type_index);
  return e ? e->key : NULL;
}

const char *ffk_type_name(int32_t type_index) {
  ensure_init();
  const type_entry *e = entry_at(type_index);
  return e ? e->name : "<unknown type>";
}

int32_t ffk_type_parent(int32_t type_index) {
  ensure_init();
  const type_entry *e = entry_at(type_index);
  return e && e->depth > 0 ? e->ancestors[e->depth - 1] : -1;
}

bool ffk_type_is_instance(int32_t type_index, int32_t base_index) {
  if (type_index == base_index) return ffk_type_exists(type_index);
  ensure_init();
  const type_entry *e = entry_at(type_index);
  const type_entry *b = entry_at(base_index);
  if (e == NULL || b == NULL) return false;
  return b->depth <= e->depth && e->ancestors[b->depth] == base_index;
}

bool ffk_object_is_instance(const ffk_object *obj, int32_t base_index) {
  return obj != NULL && ffk_type_is_instance(obj->type_index, base_index);
}

int ffk_type_set_repr(int32_t type_index, ffk_repr_fn repr) {
  ensure_init();
  type_entry *e = entry_at(type_index);
  if (e == NULL || type_index < FFK_TYPE_OBJECT_BEGIN)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_set_repr: %d is not a registered object type", (int)type_index);
  __atomic_store_n(&e->repr, repr, __ATOMIC_RELEASE);
  return 0;
}

int ffk_type_set_key_ops(int32_t type_index, ffk_key_hash_fn hash, ffk_key_equal_fn equal) {
  ensure_init();
  type_entry *e = entry_at(type_index);
  if (e == NULL || type_index < FFK_TYPE_STATIC_END)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_set_key_ops: %d is not a registered object type", (int)type_index);
  if ((hash == NULL) != (equal == NULL))
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_set_key_ops: `%s` needs both a hash and an equality, or neither",
                         e->key);
  /* equal first: a reader that sees the hash sees the equality that goes with it */
  __atomic_store_n(&e->key_equal, equal, __ATOMIC_RELEASE);
  __atomic_store_n(&e->key_hash, hash, __ATOMIC_RELEASE);
  return 0;
}

ffk_key_hash_fn ffk_type__key_hash(int32_t type_index) {
  const type_entry *e = entry_at(type_index);
  return e ? __atomic_load_n(&e->key_hash, __ATOMIC_ACQUIRE) : NULL;
}

ffk_key_equal_fn ffk_type__key_equal(int32_t type_index) {
  const type_entry *e = entry_at(type_index);
  return e ? __atomic_load_n(&e->key_equal, __ATOMIC_ACQUIRE) : NULL;
}

ffk_repr_fn ffk_type__repr_slot(int32_t type_index) {
  const type_entry *e = entry_at(type_index);
  for (int32_t d = e ? e->depth : -1; d >= 0; --d) {
    ffk_repr_fn fn = __atomic_load_n(&g_types[e->ancestors[d]]->repr, __ATOMIC_ACQUIRE);
    if (fn != NULL) return fn;
  }
  return NULL;
}

int ffk_type_set_converter(int32_t type_index, ffk_convert_fn convert) {
  ensure_init();
  type_entry *e = entry_at(type_index);
  if (e == NULL || type_index < FFK_TYPE_OBJECT_BEGIN)
    return ffk_error_set(FFK_ERR_VALUE, "ffk_type_set_converter: %d is not a registered object type", (int)type_index);
  __atomic_store_n(&e->convert, convert, __ATOMIC_RELEASE);
  return 0;
}

ffk_convert_fn ffk_type__convert_slot(int32_t type_index) {
  ensure_init();
  const type_entry *e = entry_at(type_index);
  return e != NULL ? __atomic_load_n(&e->convert, __ATOMIC_ACQUIRE) : NULL;
}

int32_t ffk_type_count(void) {
  ensure_init();
  pthread_mutex_lock(&g_lock);
  int32_t n = N_STATIC + (g_next_dynamic - FFK_TYPE_STATIC_END);
  pthread_mutex_unlock(&g_lock);
  return n;
}
