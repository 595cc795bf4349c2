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

/// A value described in plain Rust, for property tests: strategies make these (no ffikit
/// object exists until a test body builds one, so object counts stay per test), and
/// failures print them readably.
#[derive(Clone, Debug)]
pub enum Tree {
    None,
    Int(i64),
    Bool(bool),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Array(Vec<Tree>),
    List(Vec<Tree>),
    Map(Vec<(String, Tree)>),
    Dict(Vec<(String, Tree)>),
    /// A reflected object: an int field and a child, made by the test's `node` function.
    Node(i64, Box<Tree>),
}

impl Tree {
    /// The ffikit value; `node(v, child)` makes the reflected objects.
    pub fn build(&self, node: &dyn Fn(i64, ffikit::Any) -> ffikit::Any) -> ffikit::Any {
        use ffikit::{Any, Array, Dict, List, Map};
        let all = |items: &[Tree]| items.iter().map(|t| t.build(node)).collect::<Vec<Any>>();
        let pairs = |items: &[(String, Tree)]| items.iter().map(|(k, t)| (k.clone(), t.build(node))).collect::<Vec<_>>();
        match self {
            Tree::None => Any::none(),
            Tree::Int(x) => Any::from(*x),
            Tree::Bool(x) => Any::from(*x),
            Tree::Float(x) => Any::from(*x),
            Tree::Str(s) => Any::from(s.as_str()),
            Tree::Bytes(b) => Any::from(&b[..]),
            Tree::Array(items) => Any::from(&Array::<Any>::from(all(items))),
            Tree::List(items) => Any::from(&List::<Any>::from(all(items))),
            Tree::Map(kv) => Any::from(&Map::<String, Any>::from(pairs(kv))),
            Tree::Dict(kv) => Any::from(&Dict::<String, Any>::from(pairs(kv))),
            Tree::Node(v, child) => node(*v, child.build(node)),
        }
    }
}

/// Random trees: `leaf` at the bottom, containers, str-keyed maps and nodes above it.
pub fn tree(leaf: proptest::strategy::BoxedStrategy<Tree>, keys: &'static str) -> impl proptest::strategy::Strategy<Value = Tree> {
    use proptest::prelude::*;
    leaf.prop_recursive(4, 40, 5, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Tree::Array),
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Tree::List),
            proptest::collection::vec((keys, inner.clone()), 0..4).prop_map(Tree::Map),
            proptest::collection::vec((keys, inner.clone()), 0..4).prop_map(Tree::Dict),
            (-2i64..2, inner).prop_map(|(v, child)| Tree::Node(v, Box::new(child))),
        ]
    })
}
