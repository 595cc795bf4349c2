/*
 * cycles.c - ffk_debug_find_cycles: a depth-first walk that reports reference cycles.
 *
 * The walk is a loop over a heap stack of frames (one per object on the current path),
 * so no value is too deep for it. Each frame reads its object's children lazily: a
 * List or Dict through a snapshot taken when the frame is pushed (no lock is held while
 * walking), an Array/Tuple/Map in place (it never changes while referenced), a
 * reflected object's Object and Any fields with ffk_field_get.
 *
 * Invariants:
 *  - `seen` holds one strong reference to every node met, so no address it names can be
 *    freed and reused by another thread during the walk; each slot records the node's
 *    frame while it is on the path, DONE after.
 *  - A reference to a node on the path closes a cycle: the frames from that node's up
 *    to the top are it. A reference to a DONE node closes none: every node reachable
 *    from it was walked (and is DONE) while it was on the path, so had it reached
 *    back into the current path, that node would have been on its own path then
 *    (standard depth-first back edges: a graph has a cycle iff the walk meets one).
 */
#include "structural_internal.h"

#include <ffikit/cycles.h>
#include <string.h>

#define DONE (-1)

typedef struct seen_slot {
  ffk_object *obj; /* owned; NULL marks a free slot */
  int64_t frame;   /* its frame while on the path, else DONE */
} seen_slot;

typedef struct seen_set {
  seen_slot *slots;
  size_t cap, used; /* cap a power of two, kept at most half full */
} seen_set;

enum { SEQUENCE = 1, MAPPING = 2, REFLECTED = 3 };

typedef struct frame {
  ffk_object *obj; /* borrowed from `seen` */
  int kind;
  int64_t pos; /* the next element; for a mapping 2 * entry + (0 key, 1 value); for an object the next field */
  seq_view seq;
  map_view map;
} frame;

typedef struct walker {
  seen_set seen;
  frame *stack;
  int64_t depth, cap;
  ffk_list *found;
  int64_t nfound, max;
} walker;

static size_t slot_of(const seen_set *s, const ffk_object *o) {
  uint64_t h = (uint64_t)(uintptr_t)o;
  h ^= h >> 33;
  h *= UINT64_C(0xff51afd7ed558ccd);
  h ^= h >> 33;
  size_t mask = s->cap - 1;
  size_t i = (size_t)h & mask;
  while (s->slots[i].obj != NULL && s->slots[i].obj != o) i = (i + 1) & mask;
  return i;
}

static seen_slot *seen_find(seen_set *s, const ffk_object *o) {
  if (s->cap == 0) return NULL;
  seen_slot *slot = &s->slots[slot_of(s, o)];
  return slot->obj != NULL ? slot : NULL;
}

/* Adds o (retained) with its frame. 0, or -1 with a MemoryError. */
static int seen_add(seen_set *s, ffk_object *o, int64_t frame_index) {
  if ((s->used + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    seen_slot *fresh = ffk_mem_calloc(cap, sizeof *fresh);
    if (fresh == NULL) return -1;
    seen_set grown = {fresh, cap, s->used};
    for (size_t i = 0; i < s->cap; ++i)
      if (s->slots[i].obj != NULL) grown.slots[slot_of(&grown, s->slots[i].obj)] = s->slots[i];
    ffk_mem_free(s->slots);
    *s = grown;
  }
  ffk_object_retain(o);
  s->slots[slot_of(s, o)] = (seen_slot){o, frame_index};
  ++s->used;
  return 0;
}

static void frame_close(frame *f) {
  if (f->kind == SEQUENCE) seq_close(&f->seq);
  if (f->kind == MAPPING) map_close(&f->map);
  f->kind = 0;
}

/* Pushes a frame for the node `o` (met for the first time). 0, or -1. */
static int push(walker *w, ffk_object *o) {
  if (w->depth == w->cap) {
    int64_t cap = w->cap ? 2 * w->cap : 64;
    frame *more = ffk_mem_realloc(w->stack, (size_t)cap * sizeof *more);
    if (more == NULL) return -1;
    w->stack = more;
    w->cap = cap;
  }
  if (seen_add(&w->seen, o, w->depth) != 0) return -1;
  frame *f = &w->stack[w->depth];
  memset(f, 0, sizeof *f);
  f->obj = o;
  int32_t t = o->type_index;
  int rc = 0;
  if (is_sequence(t)) {
    rc = seq_open(o, &f->seq);
    f->kind = rc == 0 ? SEQUENCE : 0;
  } else if (is_mapping(t)) {
    rc = map_open(o, &f->map);
    f->kind = rc == 0 ? MAPPING : 0;
  } else {
    f->kind = REFLECTED;
  }
  if (rc != 0) return -1; /* o stays in `seen`, which the caller's cleanup releases */
  ++w->depth;
  return 0;
}

/* The next child of the top frame: 1 with *out (owned when *owned), 0 when none is left, -1 on error. */
static int next_child(frame *f, ffk_any *out, bool *owned) {
  *owned = false;
  switch (f->kind) {
    case SEQUENCE:
      if (f->pos >= f->seq.size) return 0;
      *out = f->seq.data[f->pos++];
      return 1;
    case MAPPING:
      for (;;) {
        int64_t entry = f->pos / 2;
        if (entry >= f->map.table->used) return 0;
        const ffk_table_entry *e = &f->map.table->entries[entry];
        bool value = f->pos++ % 2 == 1;
        if (e->key.type_index == TABLE_DELETED) continue;
        *out = value ? e->value : e->key;
        return 1;
      }
    case REFLECTED: {
      int32_t t = f->obj->type_index;
      int32_t n = ffk_type_num_fields(t);
      if (n < 0) return -1;
      while (f->pos < n) {
        const ffk_field_info *field = ffk_type_field_at(t, (int32_t)f->pos++);
        if (field == NULL) return -1;
        if (field->storage != FFK_FIELD_STORAGE_OBJECT && field->storage != FFK_FIELD_STORAGE_ANY) continue;
        if (ffk_field_get(field, f->obj, out) != 0) return -1;
        *owned = true;
        return 1;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/* Reports the cycle made of the frames from `from` to the top. 0, or -1. */
static int report(walker *w, int64_t from) {
  ffk_list *cycle = ffk_list_with_capacity(w->depth - from);
  if (cycle == NULL) return -1;
  for (int64_t i = from; i < w->depth; ++i) {
    ffk_any item = ffk_any_object(w->stack[i].obj);
    if (ffk_list_append_steal(cycle, &item) != 0) {
      ffk_object_release((ffk_object *)cycle);
      return -1;
    }
  }
  ffk_any entry = ffk_any_object_steal((ffk_object *)cycle);
  if (ffk_list_append_steal(w->found, &entry) != 0) return -1;
  ++w->nfound;
  return 0;
}

static void walker_free(walker *w) {
  for (int64_t i = 0; i < w->depth; ++i) frame_close(&w->stack[i]);
  ffk_mem_free(w->stack);
  for (size_t i = 0; i < w->seen.cap; ++i) ffk_object_release(w->seen.slots[i].obj);
  ffk_mem_free(w->seen.slots);
}

/* One step of the walk from the top frame. 1 to go on, 0 when the walk is over, -1 on error. */
static int step(walker *w) {
  frame *top = &w->stack[w->depth - 1];
  ffk_any child;
  bool owned;
  int rc = next_child(top, &child, &owned);
  if (rc < 0) return -1;
  if (rc == 0) {
    seen_find(&w->seen, top->obj)->frame = DONE;
    frame_close(top);
    --w->depth;
    return w->depth > 0;
  }
  int result = 1;
  if (is_node(&child)) {
    seen_slot *slot = seen_find(&w->seen, child.v_obj);
    if (slot == NULL) {
      if (push(w, child.v_obj) != 0) result = -1;
    } else if (slot->frame != DONE) {
      if (report(w, slot->frame) != 0) result = -1;
      else if (w->nfound == w->max) result = 0;
    }
  }
  if (owned) ffk_any_release(&child);
  return result;
}

ffk_list *ffk_debug_find_cycles(const ffk_any *root, int64_t max_cycles) {
  if (root == NULL) {
    ffk_error_set(FFK_ERR_VALUE, "find_cycles: the value is NULL");
    return NULL;
  }
  if (max_cycles < 1) {
    ffk_error_set(FFK_ERR_VALUE, "find_cycles: max_cycles must be at least 1, got %lld", (long long)max_cycles);
    return NULL;
  }
  walker w;
  memset(&w, 0, sizeof w);
  w.max = max_cycles;
  if ((w.found = ffk_list_new()) == NULL) return NULL;
  int rc = 0;
  if (is_node(root)) {
    rc = push(&w, root->v_obj);
    while (rc == 0 && w.depth > 0) {
      int s = step(&w);
      if (s < 0) rc = -1;
      if (s <= 0) break;
    }
  }
  walker_free(&w);
  if (rc != 0) {
    ffk_object_release((ffk_object *)w.found);
    return NULL;
  }
  return w.found;
}
