// tvm_ffi_peer.h - Apache TVM-FFI as a peer in the benchmark binaries.
//
// The peers live in tvm_ffi_peer.cc, a file that includes TVM-FFI's headers and no ffikit
// header (TVM-FFI brings its own dlpack.h 1.x, ffikit builds against Debian's), so this header
// includes neither. Each binary calls its Register* function beside its own registrations; the
// benchmarks it adds are "<group>/tvm_ffi" (TVM-FFI's C ABI: TVMFFIFunctionCall,
// TVMFFIObjectIncRef, TVMFFITensorToDLPack, ...) and "<group>/tvm_ffi_cxx" (its inline C++ API,
// where that is what its users write: ffi::Any, ffi::Function::operator(), ffi::Map::find ...),
// so bench/ratios.py pairs them with "<group>/ffikit" as it does every peer.
//
// TVM-FFI is found by @tvm_ffi (third_party/tvm_ffi_configure.bzl: the apache-tvm-ffi wheel in
// $FFK_PYTHON's environment). Without it the binary still builds and runs, and Register* adds
// one benchmark, "tvm_ffi/skipped", that reports why instead of timing anything.
#ifndef FFIKIT_BENCH_TVM_FFI_PEER_H
#define FFIKIT_BENCH_TVM_FFI_PEER_H

#include <cstdint>
#include <string>
#include <vector>

namespace ffk_bench {
namespace tvm_ffi_peer {

// True when the binary was built with the TVM-FFI peer.
bool Available();

// function_bench: call_0, call_2, call_8 (a packed callee checking and summing int
// arguments), typed_call_2 (Function::FromTyped of int64_t(int64_t, int64_t)).
void RegisterFunctionPeers();

// ffi_bench: any_box_unbox (an int into an Any and back), retain_release (of a live object).
void RegisterFfiPeers();

// containers_bench, with the same inputs as the other sides. `int_keys`/`str_keys` are the
// stored keys in insertion order; `*_hit`/`*_miss` the probe keys in probe order (TVM-FFI gets
// its own equal key objects). `push_n` elements are pushed per iteration of push_1m_*.
struct ContainerInputs {
  int64_t push_n = 0;
  const std::vector<int64_t> *int_keys = nullptr, *int_hit = nullptr, *int_miss = nullptr;
  const std::vector<std::string> *str_keys = nullptr, *str_hit = nullptr, *str_miss = nullptr;
  double min_time = 0;  // seconds per benchmark run, as the binary's other benchmarks
};
void RegisterContainerPeers(const ContainerInputs &in);

// tensor_bench: dlpack_roundtrip_{legacy,versioned} of a float32 [2, 3] CPU tensor, and
// dlpack_import_foreign/tvm_ffi (see TvmExportLegacy).
void RegisterTensorPeers();

// A new legacy DLPack export (DLManagedTensor *, as void *: this header names no DLPack
// type) of TVM-FFI's float32 [2, 3] CPU tensor, by TVMFFITensorToDLPack; nullptr without
// TVM-FFI or on failure. The consumer calls its deleter. dlpack_import_foreign/ffikit
// imports these with ffk_tensor_from_dlpack: ffikit's import of a foreign tensor.
void *TvmExportLegacy();

}  // namespace tvm_ffi_peer
}  // namespace ffk_bench

#endif  // FFIKIT_BENCH_TVM_FFI_PEER_H
