//! Depth everywhere, from Rust: on a List chain 10 million levels deep, and Array, Map,
//! Dict and Rust-defined reflected-object chains a million deep (C's depth_test takes every
//! kind to 10 million; the binding's code is the same for each, and the debug build makes
//! each 10 million tens of seconds), every operation that walks a value either works or
//! fails with C's one depth error, "containers and objects nested deeper than 1000 levels".
//! Never a stack overflow.
//!
//!   Drop, Clone                       work at any depth (C's release has a bounded stack)
//!   Display / Debug                   work: C's repr prints "..." past its own depth
//!   structural_eq / _hash / mismatch, deep_copy, to_json_graph
//!                                     Err(RuntimeError) naming the limit
//!   `==` and `Hash` (cannot fail)     panic with that message
//!   from_json_graph of deep text      Err, never a crash (yyjson does not recurse)
mod common;
use common::{live, testing_module};
use ffikit::{
    deep_copy, first_structural_mismatch, from_json_graph, from_json_graph_with_metadata, structural_eq,
    structural_hash, to_json_graph, Any, Array, Dict, ErrorKind, List, Map,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

ffikit::reflected_type! {
    /// One level of an object chain: `next` holds the level below.
    #[type_key = "rstest.depth.Node", layout = NodeLayout]
    pub struct Node {
        next: Any = Any::none(),
    }
}

const DEEP_LIST: usize = 10_000_000;
const DEEP: usize = 1_000_000;

/// `default` levels, or FFIKIT_DEPTH_TEST_DEEP's when set: `run.sh valgrind` sets 20,000,
/// since memcheck would take the better part of an hour over 10 million.
fn levels(default: usize) -> usize {
    std::env::var("FFIKIT_DEPTH_TEST_DEEP").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
const LIMIT: usize = ffikit::sys::FFK_STRUCTURAL_MAX_DEPTH as usize;
const TOO_DEEP: &str = "containers and objects nested deeper than 1000 levels";

static LOCK: Mutex<()> = Mutex::new(());

fn no_leaks(f: impl FnOnce()) {
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        testing_module();
        Node::type_index().unwrap();
    });
    let before = live(-1);
    f();
    assert_eq!(live(-1), before, "objects left alive");
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Array,
    List,
    Map,
    Dict,
    Object,
}

/// One level around `inner`.
fn wrap(kind: Kind, inner: Any) -> Any {
    match kind {
        Kind::Array => Any::from(&Array::<Any>::from(vec![inner])),
        Kind::List => Any::from(&List::<Any>::from(vec![inner])),
        Kind::Map => {
            let mut m = Map::<String, Any>::new().unwrap();
            m.insert("k".to_string(), inner).unwrap();
            Any::from(&m)
        }
        Kind::Dict => {
            let d = Dict::<String, Any>::new().unwrap();
            d.insert("k".to_string(), inner).unwrap();
            Any::from(&d)
        }
        Kind::Object => Any::from(&Node::new(inner).unwrap()),
    }
}

/// `depth` levels of `kind` around None, built bottom-up.
fn chain(kind: Kind, depth: usize) -> Any {
    let mut v = Any::none();
    for _ in 0..depth {
        v = wrap(kind, v);
    }
    v
}

fn assert_too_deep(e: ffikit::Error) {
    assert_eq!(e.error_kind(), ErrorKind::Runtime, "{}", e);
    assert_eq!(e.message(), TOO_DEEP);
}

/// The message a panic carried.
fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

fn every_walk(kind: Kind, depth: usize) {
    no_leaks(|| {
        let deep = chain(kind, depth);
        // A second chain, distinct and past the limit, so that equality has to walk.
        let other = chain(kind, 2 * LIMIT);

        // Display and Debug print "..." below repr's depth.
        let text = format!("{}", deep);
        assert!(text.contains("..."), "{}", &text[..200.min(text.len())]);
        assert_eq!(format!("{:?}", deep), text);
        // Clone is a retain; a value equals itself without a walk.
        let copy = deep.clone();
        assert!(structural_eq(&deep, &copy).unwrap());
        assert!(deep == copy);

        assert_too_deep(structural_eq(&deep, &other).unwrap_err());
        assert_too_deep(structural_hash(&deep).unwrap_err());
        assert_too_deep(first_structural_mismatch(&deep, &other).unwrap_err());
        assert_too_deep(deep_copy(&deep).unwrap_err());
        assert_too_deep(to_json_graph(&deep, None).unwrap_err());

        // `==` and `Hash` cannot return the error: they panic with it.
        let p = catch_unwind(AssertUnwindSafe(|| deep == other)).unwrap_err();
        assert!(panic_text(p).contains(TOO_DEEP));
        let p = catch_unwind(AssertUnwindSafe(|| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            deep.hash(&mut h);
            h.finish()
        }))
        .unwrap_err();
        assert!(panic_text(p).contains(TOO_DEEP));
        // Both drop here, every level at once.
    });
}

#[test]
fn every_walk_of_a_list_chain_works_or_names_the_limit() {
    every_walk(Kind::List, levels(DEEP_LIST));
}

#[test]
fn every_walk_of_an_array_chain_works_or_names_the_limit() {
    every_walk(Kind::Array, levels(DEEP));
}

#[test]
fn every_walk_of_a_map_chain_works_or_names_the_limit() {
    every_walk(Kind::Map, levels(DEEP));
}

#[test]
fn every_walk_of_a_dict_chain_works_or_names_the_limit() {
    every_walk(Kind::Dict, levels(DEEP));
}

#[test]
fn every_walk_of_an_object_chain_works_or_names_the_limit() {
    every_walk(Kind::Object, levels(DEEP));
}

#[test]
fn the_limit_passes_and_one_more_level_does_not() {
    no_leaks(|| {
        for kind in [Kind::Array, Kind::List, Kind::Map, Kind::Dict, Kind::Object] {
            let (a, b) = (chain(kind, LIMIT), chain(kind, LIMIT));
            assert!(a == b, "{:?}", kind);
            assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
            assert!(structural_eq(&deep_copy(&a).unwrap(), &a).unwrap());
            let back = from_json_graph(&to_json_graph(&a, None).unwrap()).unwrap();
            assert!(structural_eq(&back, &a).unwrap());
            assert_too_deep(structural_hash(&wrap(kind, a.clone())).unwrap_err());
        }
    });
}

#[test]
fn deeply_nested_json_text_is_an_error_not_a_crash() {
    no_leaks(|| {
        let n = levels(DEEP_LIST);
        let nested = "[".repeat(n) + &"]".repeat(n);
        let doc = format!(r#"{{"root_index":0,"nodes":[{{"type":"ffi.Array","data":[]}}],"metadata":{}}}"#, nested);
        assert_too_deep(from_json_graph_with_metadata(&doc).unwrap_err());
        assert!(from_json_graph(&nested).is_err());
        // Nodes that refer to one another past the limit.
        let mut nodes: Vec<String> =
            (0..2 * LIMIT).map(|i| format!(r#"{{"type":"ffi.Array","data":[{}]}}"#, i + 1)).collect();
        nodes.push(r#"{"type":"ffi.Array","data":[]}"#.to_string());
        let graph = format!(r#"{{"root_index":0,"nodes":[{}]}}"#, nodes.join(","));
        assert_too_deep(from_json_graph(&graph).unwrap_err());
    });
}
