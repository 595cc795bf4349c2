//! Dropping deep data (issue 35, item 2): a chain of any depth, each level holding the next,
//! is released by C with a bounded stack when its head is dropped, on any thread. Rust's
//! `Drop` of a handle is one `ffk_object_release`; the levels below die in C's deleters,
//! including a Rust-defined type's fields and a Rust closure's captures (whose drop runs
//! inside the Function's context deleter and releases the next level from there).
//!
//! The issue asks for ten million levels. The tests are a debug build that runs in
//! parallel, so each chain is DEPTH (one million) deep by default, far past what the old
//! recursion survived (a few hundred thousand levels on 8 MiB); `FFK_DEEP_10M=1` makes
//! them ten million deep, and `FFIKIT_DEPTH_TEST_DEEP=N` (set under valgrind) N deep.
mod common;

use ffikit::{Any, AnyView, Array, Dict, Function, List, Map};
use std::sync::Mutex;

fn depth() -> usize {
    if std::env::var_os("FFK_DEEP_10M").is_some() {
        return 10_000_000;
    }
    // `run.sh valgrind` sets 20,000 (past the release's 32 KiB stack bound all the same):
    // a million levels would take most of an hour under memcheck.
    std::env::var("FFIKIT_DEPTH_TEST_DEEP").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

/// A thread stack that only a bounded release fits in.
const SMALL_STACK: usize = 256 * 1024;

/// One chain at a time: their memory (about 150 bytes a level), not their time, is the limit,
/// and the live-object counts below are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

ffikit::reflected_type! {
    /// A node of a chain defined in Rust: its field holds the next level.
    #[type_key = "rstest.DeepNode", layout = DeepNodeLayout]
    pub struct DeepNode {
        next: Any = Any::none(),
    }
}

type Wrap = fn(Any) -> Any;

fn in_list(x: Any) -> Any {
    let l = List::<Any>::new().unwrap();
    l.push(x).unwrap();
    Any::from(&l)
}

fn in_array(x: Any) -> Any {
    let mut a = Array::<Any>::new().unwrap();
    a.push(x).unwrap();
    Any::from(&a)
}

fn in_map(x: Any) -> Any {
    let mut m = Map::<i64, Any>::new().unwrap();
    m.insert(1, x).unwrap();
    Any::from(&m)
}

fn in_dict(x: Any) -> Any {
    let d = Dict::<i64, Any>::new().unwrap();
    d.insert(1, x).unwrap();
    Any::from(&d)
}

fn in_rust_type(x: Any) -> Any {
    Any::from(&DeepNode::new(x).unwrap())
}

/// A Rust closure that captures the next level: dropping the closure releases it.
fn in_closure(x: Any) -> Any {
    let f = Function::from_packed("link", move |_: &[AnyView<'_>]| Ok(x.clone())).unwrap();
    Any::from(&f)
}

fn chain(depth: usize, kinds: &[Wrap]) -> Any {
    let mut x = Any::none();
    for i in 0..depth {
        x = kinds[i % kinds.len()](x);
    }
    x
}

fn live() -> Option<i64> {
    common::live(-1)
}

/// Builds the chain, drops it (on a small-stack thread when `threaded`) and checks that
/// everything it held is gone when the drop returns.
fn drops_deep(kinds: &[Wrap], threaded: bool) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = live();
    let x = chain(depth(), kinds);
    if let (Some(b), Some(now)) = (before, live()) {
        assert!(now >= b + depth() as i64, "{} live, {} before", now, b);
    }
    if threaded {
        std::thread::Builder::new().stack_size(SMALL_STACK).spawn(move || drop(x)).unwrap().join().unwrap();
    } else {
        drop(x);
    }
    assert_eq!(live(), before);
}

#[test]
fn list_chain() {
    drops_deep(&[in_list], false);
}

#[test]
fn array_chain() {
    drops_deep(&[in_array], false);
}

#[test]
fn map_chain() {
    drops_deep(&[in_map], false);
}

#[test]
fn dict_chain() {
    drops_deep(&[in_dict], false);
}

#[test]
fn rust_defined_type_chain() {
    drops_deep(&[in_rust_type], false);
}

#[test]
fn rust_closure_chain() {
    drops_deep(&[in_closure], false);
}

#[test]
fn mixed_chain_on_a_thread_with_a_small_stack() {
    drops_deep(&[in_list, in_array, in_map, in_dict, in_rust_type, in_closure], true);
}

#[test]
fn rust_defined_type_chain_on_a_thread_with_a_small_stack() {
    drops_deep(&[in_rust_type], true);
}
