//! Raw bindings to ffikit's C API, generated at build time by Debian's `bindgen` CLI
//! (0.60) from the headers that `pkg-config ffikit` points at. Nothing here is safe:
//! use the `ffikit` crate. See `csrc/ffikit_sys.h` for what is added to the headers:
//! the `static inline` helpers as real functions, and `FFKRS_*` constants for the
//! `UINT64_C` macros bindgen cannot evaluate.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
#![allow(clippy::all)]
// DLPack's Doxygen comments come through as docs; they are not rustdoc.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
