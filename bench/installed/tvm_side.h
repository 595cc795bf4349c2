// tvm_side.h - the TVM-FFI half of installed_bench (tvm_side.cc, compiled against the
// apache-tvm-ffi wheel's headers and linked to its libtvm_ffi.so; it includes no ffikit
// header, as this header includes neither library's: each brings its own dlpack.h).
#ifndef FFIKIT_BENCH_INSTALLED_TVM_SIDE_H
#define FFIKIT_BENCH_INSTALLED_TVM_SIDE_H

namespace ffk_installed {

// Registers "<case>/tvm_ffi" and "<case>/tvm_ffi_cxx" for the cases installed_bench.cc
// lists (its header comment says what each does).
void RegisterTvmPeers();

}  // namespace ffk_installed

#endif  // FFIKIT_BENCH_INSTALLED_TVM_SIDE_H
