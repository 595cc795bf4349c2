//! With the `static` feature, this package's tests, examples and benches are linked with
//! `-rdynamic`, so modules they load at run time (libffikit_testing.so, rustmod) bind
//! their ffk_* references to the program's own copy of ffikit, as a C program linked
//! against libffikit.a must (see ffikit/module.h).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_STATIC").is_some() {
        println!("cargo:rustc-link-arg=-rdynamic");
    }
}
