// nb_peer.cpp - nanobind's module functions as a benchmark peer of ffikit's Function calls
// (bench_ffi.py builds it on first use with g++ against the nanobind wheel's own sources;
// nanobind is a bench-only requirement, never a dependency of ffikit).
//
// nop_args(*args) takes nb::args, the peer of an untyped ffikit Function that accepts any
// arguments; nop0() and nop3(int, int, int) are fixed-arity functions whose arguments
// nanobind's dispatcher converts from the signature (informational rows). Each returns None.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

NB_MODULE(ffikit_bench_nb_peer, m) {
  m.def("nop_args", [](nb::args args) { (void)args; });
  m.def("nop0", []() {});
  m.def("nop3", [](int a, int b, int c) { (void)a, (void)b, (void)c; });
}
