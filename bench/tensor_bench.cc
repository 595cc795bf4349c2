// tensor_bench: Tensors (DLPack exchange, creation, copies) beside the least work the same
// job needs in plain C (malloc, free, memcpy, an atomic retain/release), in one binary.
//
// Every group has one "<group>/ffikit" benchmark and one or more "<group>/<peer>" benchmarks
// doing equivalent work; bench/ratios.py pairs them by group and prints ffikit/peer ratios of
// CPU time per iteration (one round trip, one tensor made and destroyed, one 64 MiB copy).
//
// Groups (ffikit side / peer sides)
//   dlpack_roundtrip_legacy, dlpack_roundtrip_versioned
//                  t is a float32 [2, 3] CPU tensor made once. Each iteration:
//                  ffk_tensor_to_dlpack(t) (or _versioned): one malloc of the managed struct
//                  plus the exporter's pointer, the DLTensor copied in, t retained; then
//                  ffk_tensor_from_dlpack(m, NULL) (or _versioned): the DLTensor validated and a
//                  new Tensor object made (one malloc, shape and strides copied in); then
//                  ffk_object_release of the imported Tensor, which runs m's deleter (t
//                  released, the export freed) and frees the Tensor
//                  / bound: the export and its deleter with nothing else: malloc of the same
//                  block (the managed struct plus one pointer: 72 bytes legacy, 88 versioned),
//                  every field filled (the 48-byte DLTensor copied from t's, manager_ctx,
//                  deleter; version and flags for the versioned struct), ffk_object_retain(t),
//                  then the deleter called through the struct's function pointer, which does
//                  ffk_object_release(t) and free. No consumer-side object, no validation
//                  / bound_handle: bound plus the smallest import that gives the consumer its
//                  own object: a malloc of 144 bytes (the size of ffikit's 2-d Tensor: the
//                  24-byte object header, the DLTensor, four pointers and a flag, shape and
//                  strides), the DLTensor, shape and strides copied in, and its free before
//                  the deleter runs
//                  / tvm_ffi: TVM-FFI's TVMFFITensorToDLPack(Versioned) of its own float32
//                  [2, 3] CPU tensor, TVMFFITensorFromDLPack(Versioned)(m, 0, 0, &h) and
//                  TVMFFIObjectDecRef(h) (bench/tvm_ffi_peer.cc). An export of ffikit's own
//                  coming back unchanged is short-cut to the exported Tensor (dlpack.c), so
//                  these rows time that path; the next group times a foreign import
//   dlpack_import_foreign
//                  ffk_tensor_from_dlpack of a new legacy export of TVM-FFI's float32 [2, 3]
//                  tensor (TVMFFITensorToDLPack), then ffk_object_release (which runs the
//                  export's deleter): ffikit's full import path, validation and a new Tensor
//                  / tvm_ffi: the same exports imported by TVMFFITensorFromDLPack and released
//   empty_f32_2x3, empty_f32_16
//                  ffk_tensor_empty(float32, [2, 3] = 24 bytes or [16] = 64 bytes, cpu) and
//                  ffk_object_release: one block holding the Tensor, its Storage and the
//                  64-byte-aligned bytes (ffikit's small-tensor path), one malloc and one
//                  free; the elements are not touched
//                  / malloc2: two mallocs, a 48-byte DLTensor and the data bytes (24 or 64),
//                  the DLTensor's fields filled (data, device, ndim, dtype, shape pointing to
//                  the caller's array, strides NULL, byte_offset 0), then two frees
//                  / malloc1: the same in one malloc of 48 + data bytes (the data right after
//                  the DLTensor), one free
//   copy_transposed_64mb
//                  ffk_tensor_copy_from(dst, src^T): dst a dense float32 [4096, 4096] tensor,
//                  src^T the transpose view (strides [1, 4096]) of another one; 64 MiB copied,
//                  every element read from a different row of src than its neighbour in dst
//                  / memcpy: memcpy of the 64 MiB from src's bytes to dst's bytes
//   copy_contiguous_64mb
//                  ffk_tensor_copy_from(dst, src), both dense [4096, 4096] float32
//                  / memcpy: as above
//
// The copy groups report bytes_per_second (SetBytesProcessed): the bytes copied, 64 MiB per
// iteration (the memory traffic is at least twice that: each byte is read once and written
// once). Both 64 MiB tensors are made, filled and checked once, before any copy is timed,
// and every copy side uses the same two buffers, so page faults and the kernel's choice of
// pages are the same for all. Every result is checked once before timing (data pointers,
// shapes, refcounts back to one, the transposed elements), so a broken path skips instead
// of timing an error.
//
// Run with: bench/run.sh --only=tensor_bench  (or bazel run -c opt //bench:tensor_bench)

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/tvm_ffi_peer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <ffikit/dlpack.h>
#include <ffikit/error.h>
#include <ffikit/object.h>
#include <ffikit/tensor.h>

namespace {

using ffk_bench::SkipWithFfkError;

constexpr DLDevice kCpu = {kDLCPU, 0};
constexpr DLDataType kF32 = {kDLFloat, 32, 1};
constexpr int64_t kSide = 4096;  // the 64 MiB copies: float32 [4096, 4096]
constexpr int64_t kCopyBytes = kSide * kSide * static_cast<int64_t>(sizeof(float));

// Keeps a value that is still used afterwards (freed, released) from being optimised away
// without letting the compiler assume it changed (see function_bench.cc).
template <typename T>
inline void Escape(const T &value) {
  benchmark::DoNotOptimize(value);
}

[[noreturn]] void Die(const char *what) {
  std::fprintf(stderr, "tensor_bench: setup failed: %s", what);
  if (ffk_error *err = ffk_error_peek_borrow())
    std::fprintf(stderr, ": %s: %s", ffk_error_kind(err), ffk_error_message(err));
  std::fprintf(stderr, "\n");
  std::abort();
}

ffk_object *Obj(ffk_tensor *t) { return reinterpret_cast<ffk_object *>(t); }

// The strong count of an object (the low 32 bits of its refcount word).
uint32_t StrongCount(ffk_tensor *t) {
  return static_cast<uint32_t>(__atomic_load_n(&Obj(t)->refcount, __ATOMIC_RELAXED));
}

// ---- dlpack_roundtrip_{legacy,versioned} ---------------------------------------------------

// The two API flavours, so one template times both.
struct Legacy {
  using Managed = DLManagedTensor;
  static Managed *Export(ffk_tensor *t) { return ffk_tensor_to_dlpack(t); }
  static ffk_tensor *Import(Managed *m) { return ffk_tensor_from_dlpack(m, nullptr); }
};
struct Versioned {
  using Managed = DLManagedTensorVersioned;
  static Managed *Export(ffk_tensor *t) { return ffk_tensor_to_dlpack_versioned(t); }
  static ffk_tensor *Import(Managed *m) { return ffk_tensor_from_dlpack_versioned(m, nullptr); }
};

ffk_tensor *SmallTensor() {
  int64_t shape[2] = {2, 3};
  ffk_tensor *t = ffk_tensor_empty(2, shape, kF32, kCpu);
  if (t == nullptr) Die("ffk_tensor_empty");
  return t;
}

template <typename Api>
void DlpackRoundTrip_ffikit(benchmark::State &state) {
  ffk_tensor *t = SmallTensor();
  {  // the import sees t's memory and shape, and releasing it gives t's reference back
    typename Api::Managed *m = Api::Export(t);
    ffk_tensor *u = m ? Api::Import(m) : nullptr;
    if (u == nullptr) {
      ffk_object_release(Obj(t));
      return SkipWithFfkError(state, "DLPack export or import");
    }
    const DLTensor *a = ffk_tensor_dltensor_borrow(t), *b = ffk_tensor_dltensor_borrow(u);
    bool ok = ffk_tensor_data_ptr(u) == ffk_tensor_data_ptr(t) && b->ndim == 2 && b->shape[0] == 2 &&
              b->shape[1] == 3 && b->strides[0] == a->strides[0] && b->strides[1] == a->strides[1] &&
              StrongCount(t) == 2;
    ffk_object_release(Obj(u));
    ok = ok && StrongCount(t) == 1;
    if (!ok) {
      ffk_object_release(Obj(t));
      return state.SkipWithError("the round trip did not give back the same tensor");
    }
  }
  for (auto _ : state) {
    typename Api::Managed *m = Api::Export(t);
    if (FFK_UNLIKELY(m == nullptr)) return SkipWithFfkError(state, "ffk_tensor_to_dlpack");
    ffk_tensor *u = Api::Import(m);
    if (FFK_UNLIKELY(u == nullptr)) return SkipWithFfkError(state, "ffk_tensor_from_dlpack");
    Escape(u);
    ffk_object_release(Obj(u));
  }
  ffk_object_release(Obj(t));
}

// The bound's export block: the managed struct and the exporter's pointer, as in dlpack.c.
template <typename Managed>
struct BoundExport {
  Managed managed;
  ffk_tensor *tensor;
};

template <typename Managed>
void BoundDeleter(Managed *self) {
  auto *e = reinterpret_cast<BoundExport<Managed> *>(self);
  ffk_object_release(Obj(e->tensor));
  std::free(e);
}

template <typename Managed>
inline Managed *BoundExportOf(ffk_tensor *t, const DLTensor *dl) {
  auto *e = static_cast<BoundExport<Managed> *>(std::malloc(sizeof(BoundExport<Managed>)));
  if (FFK_UNLIKELY(e == nullptr)) return nullptr;
  ffk_object_retain(Obj(t));
  e->tensor = t;
  e->managed.dl_tensor = *dl;
  e->managed.manager_ctx = t;
  e->managed.deleter = BoundDeleter<Managed>;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    e->managed.version.major = DLPACK_MAJOR_VERSION;
    e->managed.version.minor = DLPACK_MINOR_VERSION;
    e->managed.flags = 0;
  }
  return &e->managed;
}

// The consumer's own handle in bound_handle: the size of ffikit's 2-d Tensor object.
struct BoundHandle {
  unsigned char header[24];
  DLTensor dl;
  void *pointers[4];
  bool read_only;
  int64_t dims[4];
};
static_assert(sizeof(BoundHandle) == 144, "the size of a 2-d ffk_tensor");

template <typename Api, bool kHandle>
void DlpackRoundTrip_bound(benchmark::State &state) {
  using Managed = typename Api::Managed;
  ffk_tensor *t = SmallTensor();
  const DLTensor *dl = ffk_tensor_dltensor_borrow(t);
  for (auto _ : state) {
    Managed *m = BoundExportOf<Managed>(t, dl);
    if (FFK_UNLIKELY(m == nullptr)) return state.SkipWithError("malloc failed");
    Escape(m);
    if constexpr (kHandle) {
      auto *h = static_cast<BoundHandle *>(std::malloc(sizeof(BoundHandle)));
      if (FFK_UNLIKELY(h == nullptr)) return state.SkipWithError("malloc failed");
      h->dl = m->dl_tensor;
      int32_t nd = h->dl.ndim;
      std::memcpy(h->dims, h->dl.shape, static_cast<size_t>(nd) * sizeof(int64_t));
      std::memcpy(h->dims + nd, h->dl.strides, static_cast<size_t>(nd) * sizeof(int64_t));
      h->dl.shape = h->dims;
      h->dl.strides = h->dims + nd;
      h->pointers[0] = m;
      Escape(h);
      std::free(h);
    }
    m->deleter(m);
  }
  if (StrongCount(t) != 1) state.SkipWithError("the bound leaked a reference");
  ffk_object_release(Obj(t));
}

// ---- empty_f32_{2x3,16} ---------------------------------------------------------------------

void Empty_ffikit(benchmark::State &state, int32_t ndim, const int64_t *shape) {
  for (auto _ : state) {
    ffk_tensor *t = ffk_tensor_empty(ndim, shape, kF32, kCpu);
    if (FFK_UNLIKELY(t == nullptr)) return SkipWithFfkError(state, "ffk_tensor_empty");
    Escape(t);
    ffk_object_release(Obj(t));
  }
}

size_t DataBytes(int32_t ndim, const int64_t *shape) {
  size_t n = sizeof(float);
  for (int32_t i = 0; i < ndim; ++i) n *= static_cast<size_t>(shape[i]);
  return n;
}

inline void FillDl(DLTensor *d, void *data, int32_t ndim, const int64_t *shape) {
  d->data = data;
  d->device = kCpu;
  d->ndim = ndim;
  d->dtype = kF32;
  d->shape = const_cast<int64_t *>(shape);
  d->strides = nullptr;
  d->byte_offset = 0;
}

void Empty_malloc2(benchmark::State &state, int32_t ndim, const int64_t *shape) {
  size_t nbytes = DataBytes(ndim, shape);
  for (auto _ : state) {
    auto *d = static_cast<DLTensor *>(std::malloc(sizeof(DLTensor)));
    void *data = std::malloc(nbytes);
    if (FFK_UNLIKELY(d == nullptr || data == nullptr)) return state.SkipWithError("malloc failed");
    FillDl(d, data, ndim, shape);
    Escape(d);
    std::free(d->data);
    std::free(d);
  }
}

void Empty_malloc1(benchmark::State &state, int32_t ndim, const int64_t *shape) {
  size_t nbytes = DataBytes(ndim, shape);
  for (auto _ : state) {
    auto *d = static_cast<DLTensor *>(std::malloc(sizeof(DLTensor) + nbytes));
    if (FFK_UNLIKELY(d == nullptr)) return state.SkipWithError("malloc failed");
    FillDl(d, d + 1, ndim, shape);
    Escape(d);
    std::free(d);
  }
}

const int64_t kShape2x3[2] = {2, 3};
const int64_t kShape16[1] = {16};

// ---- copy_transposed_64mb, copy_contiguous_64mb ------------------------------------------

// The 64 MiB tensors, made once: src holds 0, 1, 2, ... as floats (exact below 2^24), src_t
// is its transpose view, dst is dense. Made and faulted in before any copy is timed.
struct Big {
  ffk_tensor *src = nullptr, *src_t = nullptr, *dst = nullptr;
};

Big &TheBig() {
  static Big *big = [] {
    auto *b = new Big;
    int64_t shape[2] = {kSide, kSide};
    b->src = ffk_tensor_empty(2, shape, kF32, kCpu);
    b->dst = ffk_tensor_empty(2, shape, kF32, kCpu);
    if (b->src == nullptr || b->dst == nullptr) Die("ffk_tensor_empty (64 MiB)");
    b->src_t = ffk_tensor_transpose(b->src, 0, 1);
    if (b->src_t == nullptr) Die("ffk_tensor_transpose");
    auto *s = static_cast<float *>(ffk_tensor_data_ptr(b->src));
    for (int64_t i = 0; i < kSide * kSide; ++i) s[i] = static_cast<float>(i);
    std::memset(ffk_tensor_data_ptr(b->dst), 0, static_cast<size_t>(kCopyBytes));
    return b;
  }();
  return *big;
}

// dst == src transposed, element by element.
bool IsTransposeOfSrc(const Big &b) {
  const auto *s = static_cast<const float *>(ffk_tensor_data_ptr(b.src));
  const auto *d = static_cast<const float *>(ffk_tensor_data_ptr(b.dst));
  for (int64_t i = 0; i < kSide; ++i)
    for (int64_t j = 0; j < kSide; ++j)
      if (d[i * kSide + j] != s[j * kSide + i]) return false;
  return true;
}

void CopyTransposed_ffikit(benchmark::State &state) {
  Big &b = TheBig();
  std::memset(ffk_tensor_data_ptr(b.dst), 0, static_cast<size_t>(kCopyBytes));
  if (ffk_tensor_copy_from(b.dst, b.src_t) != 0) return SkipWithFfkError(state, "ffk_tensor_copy_from");
  if (!IsTransposeOfSrc(b)) return state.SkipWithError("the copy is not the transpose");
  for (auto _ : state) {
    if (FFK_UNLIKELY(ffk_tensor_copy_from(b.dst, b.src_t) != 0)) return SkipWithFfkError(state, "ffk_tensor_copy_from");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kCopyBytes);
}

void CopyContiguous_ffikit(benchmark::State &state) {
  Big &b = TheBig();
  std::memset(ffk_tensor_data_ptr(b.dst), 0, static_cast<size_t>(kCopyBytes));
  if (ffk_tensor_copy_from(b.dst, b.src) != 0) return SkipWithFfkError(state, "ffk_tensor_copy_from");
  if (std::memcmp(ffk_tensor_data_ptr(b.dst), ffk_tensor_data_ptr(b.src), static_cast<size_t>(kCopyBytes)) != 0)
    return state.SkipWithError("the copy differs from the source");
  for (auto _ : state) {
    if (FFK_UNLIKELY(ffk_tensor_copy_from(b.dst, b.src) != 0)) return SkipWithFfkError(state, "ffk_tensor_copy_from");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kCopyBytes);
}

void Copy_memcpy(benchmark::State &state) {
  Big &b = TheBig();
  void *d = ffk_tensor_data_ptr(b.dst);
  const void *s = ffk_tensor_data_ptr(b.src);
  for (auto _ : state) {
    Escape(d);
    std::memcpy(d, s, static_cast<size_t>(kCopyBytes));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kCopyBytes);
}

// fill_64mb: ffk_tensor_fill of the dense float32 [4096, 4096] tensor with 1.5 (on the CPU
// the element is broadcast through the copy loop's row kernel, a zero-stride source). Peer:
// memset of the 64 MiB, the least any fill writes.
void Fill_ffikit(benchmark::State &state) {
  Big &b = TheBig();
  ffk_any v = ffk_any_float(1.5);
  if (ffk_tensor_fill(b.dst, &v) != 0) return SkipWithFfkError(state, "ffk_tensor_fill");
  if (static_cast<const float *>(ffk_tensor_data_ptr(b.dst))[kSide * kSide - 1] != 1.5f)
    return state.SkipWithError("the fill did not reach the last element");
  for (auto _ : state) {
    if (FFK_UNLIKELY(ffk_tensor_fill(b.dst, &v) != 0)) return SkipWithFfkError(state, "ffk_tensor_fill");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kCopyBytes);
}

void Fill_memset(benchmark::State &state) {
  Big &b = TheBig();
  void *d = ffk_tensor_data_ptr(b.dst);
  for (auto _ : state) {
    Escape(d);
    std::memset(d, 0x3f, static_cast<size_t>(kCopyBytes));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kCopyBytes);
}

// ---- dlpack_import_foreign -------------------------------------------------------------------

void DlpackImportForeign_ffikit(benchmark::State &state) {
  for (auto _ : state) {
    auto *m = static_cast<DLManagedTensor *>(ffk_bench::tvm_ffi_peer::TvmExportLegacy());
    if (FFK_UNLIKELY(m == nullptr)) return state.SkipWithError("TVM-FFI's export failed");
    ffk_tensor *u = ffk_tensor_from_dlpack(m, nullptr);
    if (FFK_UNLIKELY(u == nullptr)) {
      m->deleter(m);
      return SkipWithFfkError(state, "ffk_tensor_from_dlpack");
    }
    Escape(u);
    ffk_object_release(Obj(u));
  }
}

// ---- registration -------------------------------------------------------------------------

void RegisterAll() {
  using benchmark::RegisterBenchmark;
  RegisterBenchmark("dlpack_roundtrip_legacy/ffikit", DlpackRoundTrip_ffikit<Legacy>);
  RegisterBenchmark("dlpack_roundtrip_legacy/bound", DlpackRoundTrip_bound<Legacy, false>);
  RegisterBenchmark("dlpack_roundtrip_legacy/bound_handle", DlpackRoundTrip_bound<Legacy, true>);
  RegisterBenchmark("dlpack_roundtrip_versioned/ffikit", DlpackRoundTrip_ffikit<Versioned>);
  RegisterBenchmark("dlpack_roundtrip_versioned/bound", DlpackRoundTrip_bound<Versioned, false>);
  if (ffk_bench::tvm_ffi_peer::Available()) RegisterBenchmark("dlpack_import_foreign/ffikit", DlpackImportForeign_ffikit);
  ffk_bench::tvm_ffi_peer::RegisterTensorPeers();
  RegisterBenchmark("dlpack_roundtrip_versioned/bound_handle", DlpackRoundTrip_bound<Versioned, true>);

  RegisterBenchmark("empty_f32_2x3/ffikit", Empty_ffikit, 2, kShape2x3);
  RegisterBenchmark("empty_f32_2x3/malloc2", Empty_malloc2, 2, kShape2x3);
  RegisterBenchmark("empty_f32_2x3/malloc1", Empty_malloc1, 2, kShape2x3);
  RegisterBenchmark("empty_f32_16/ffikit", Empty_ffikit, 1, kShape16);
  RegisterBenchmark("empty_f32_16/malloc2", Empty_malloc2, 1, kShape16);
  RegisterBenchmark("empty_f32_16/malloc1", Empty_malloc1, 1, kShape16);

  RegisterBenchmark("copy_transposed_64mb/ffikit", CopyTransposed_ffikit)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("copy_transposed_64mb/memcpy", Copy_memcpy)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("copy_contiguous_64mb/ffikit", CopyContiguous_ffikit)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("copy_contiguous_64mb/memcpy", Copy_memcpy)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("fill_64mb/ffikit", Fill_ffikit)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("fill_64mb/memset", Fill_memset)->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char **argv) {
  if (!ffk_bench::Start(&argc, argv)) return 1;
  RegisterAll();
  ffk_bench::Run();
  return 0;
}
