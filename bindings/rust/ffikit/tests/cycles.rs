//! Cycles and weak handles from Rust: `WeakRef` in a field breaks a cycle, and
//! `find_cycles` reports the ones left (ffikit/weak_ref.h, ffikit/cycles.h).
mod common;
use common::live;
use ffikit::{find_cycles, Any, Dict, List, ObjectType, WeakRef};

ffikit::reflected_type! {
    /// A node whose `link` may point anywhere (a parent, a sibling, itself).
    #[type_key = "rstest.CycleNode", layout = CycleNodeLayout]
    pub struct CycleNode {
        id: i64 = 0,
        #[writable(set_link)]
        link: Any = Any::none(),
    }
}

#[test]
fn weak_ref_upgrades_while_alive_and_not_after() {
    let target: List<i64> = vec![1, 2].into();
    let weak = WeakRef::new(&target).unwrap();
    assert!(weak.is_alive());
    assert_eq!(target.use_count(), 1); // no strong reference taken
    let back = weak.upgrade().unwrap().unwrap();
    assert!(back.ptr_eq(target.as_object()));
    drop(back);
    assert!(weak.to_string().contains("; to ffikit.List at 0x"), "{}", weak);
    let again = WeakRef::new(&target).unwrap();
    assert_eq!(weak, again); // equal by target
    drop(target);
    assert!(!weak.is_alive());
    assert!(weak.upgrade().unwrap().is_none());
    assert_eq!(weak, again); // still: the target's memory is held, its address not reused
    assert!(weak.to_string().ends_with("; dead>"), "{}", weak);
}

#[test]
fn two_nodes_that_hold_each_other_are_found_and_a_weak_ref_breaks_the_cycle() {
    let t = CycleNode::type_index().unwrap();
    let before = live(t);
    {
        let a = CycleNode::new(1, Any::none()).unwrap();
        let b = CycleNode::new(2, Any::from(&a)).unwrap();
        a.set_link(Any::from(&b)).unwrap();
        let cycles = find_cycles(&a, 10).unwrap();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].len(), 2);
        assert!(cycles[0][0].ptr_eq(a.as_object()) && cycles[0][1].ptr_eq(b.as_object()));
        // The back link as a WeakRef: no cycle, and both go when dropped.
        b.set_link(Any::from(&WeakRef::new(&a).unwrap())).unwrap();
        assert!(find_cycles(&a, 10).unwrap().is_empty());
    }
    assert_eq!(live(t), before);
}

#[test]
fn self_loops_through_a_list_and_a_dict_value_are_found() {
    let l: List<Any> = List::new().unwrap();
    l.push(Any::from(&l)).unwrap();
    let cycles = find_cycles(&l, 10).unwrap();
    assert_eq!(cycles.len(), 1);
    assert!(cycles[0].len() == 1 && cycles[0][0].ptr_eq(l.as_object()));
    l.clear().unwrap();

    let d: Dict<String, Any> = Dict::new().unwrap();
    let n = CycleNode::new(7, Any::from(&d)).unwrap();
    d.insert("n".to_string(), Any::from(&n)).unwrap();
    assert_eq!(find_cycles(&d, 10).unwrap()[0].len(), 2);
    n.set_link(Any::none()).unwrap();
    assert!(find_cycles(&d, 10).unwrap().is_empty());
}

#[test]
fn a_long_cycle_is_found_and_bad_limits_are_errors() {
    let first = CycleNode::new(0, Any::none()).unwrap();
    let mut last = first.clone();
    for i in 1..10_000 {
        let next = CycleNode::new(i, Any::none()).unwrap();
        last.set_link(Any::from(&next)).unwrap();
        last = next;
    }
    last.set_link(Any::from(&first)).unwrap();
    let cycles = find_cycles(&first, 1).unwrap();
    assert_eq!(cycles[0].len(), 10_000);
    drop(cycles);
    last.set_link(Any::none()).unwrap();
    let err = find_cycles(&first, 0).unwrap_err();
    assert!(err.message().contains("max_cycles must be at least 1, got 0"), "{}", err.message());
}
