//! Shared by the integration tests: the testing.* globals from libffikit_testing.so.
#![allow(dead_code)]
use ffikit::{Function, Module};
use std::sync::OnceLock;

/// Loads libffikit_testing.so once (its init registers the testing.* globals). The path
/// comes from FFIKIT_TESTING_LIB, which bindings/rust/.cargo/config.toml sets.
pub fn testing_module() -> &'static Module {
    static M: OnceLock<Module> = OnceLock::new();
    M.get_or_init(|| {
        let path = std::env::var("FFIKIT_TESTING_LIB").expect("FFIKIT_TESTING_LIB is set by .cargo/config.toml");
        Module::load(&path).unwrap_or_else(|e| panic!("loading {}: {} (run `bazel build //testing:libffikit_testing.so`)", path, e))
    })
}

/// The global `testing.<name>`.
pub fn testing(name: &str) -> Function {
    testing_module();
    Function::get_global(&format!("testing.{}", name)).unwrap().unwrap_or_else(|| panic!("no testing.{}", name))
}

/// Live objects of a type in testing builds of the C library (None when hooks are off).
pub fn live(type_index: i32) -> Option<i64> {
    unsafe {
        if ffikit::sys::ffk_debug_hooks_available() {
            Some(ffikit::sys::ffk_debug_live_objects(type_index))
        } else {
            None
        }
    }
}
