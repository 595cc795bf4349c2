//! Property tests against std models: List<i64> vs Vec, Dict<i64, i64> vs an
//! insertion-ordered model, Array/Map clones unchanged by mutations of the original.
use ffikit::{Array, Dict, List, Map};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum ListOp {
    Push(i64),
    Insert(i64, i64),
    Pop(i64),
    Set(i64, i64),
    Reverse,
    Clear,
}

fn list_op() -> impl Strategy<Value = ListOp> {
    prop_oneof![
        4 => any::<i64>().prop_map(ListOp::Push),
        2 => (-12i64..12, any::<i64>()).prop_map(|(i, v)| ListOp::Insert(i, v)),
        2 => (-12i64..12).prop_map(ListOp::Pop),
        2 => (-12i64..12, any::<i64>()).prop_map(|(i, v)| ListOp::Set(i, v)),
        1 => Just(ListOp::Reverse),
        1 => Just(ListOp::Clear),
    ]
}

/// Python's index rules: negative counts from the end; None when out of range.
fn norm(i: i64, len: usize) -> Option<usize> {
    let j = if i < 0 { i + len as i64 } else { i };
    (j >= 0 && (j as usize) < len).then_some(j as usize)
}

proptest! {
    #[test]
    fn list_matches_vec(ops in proptest::collection::vec(list_op(), 0..60)) {
        let l: List<i64> = List::new().unwrap();
        let mut model: Vec<i64> = Vec::new();
        for op in ops {
            match op {
                ListOp::Push(v) => { l.push(v).unwrap(); model.push(v); }
                ListOp::Insert(i, v) => {
                    l.insert(i, v).unwrap();
                    let n = model.len() as i64;
                    let at = if i < 0 { (i + n).max(0) } else { i.min(n) };
                    model.insert(at as usize, v);
                }
                ListOp::Pop(i) => match norm(i, model.len()) {
                    Some(j) => prop_assert_eq!(l.pop(i).unwrap(), model.remove(j)),
                    None => prop_assert_eq!(l.pop(i).unwrap_err().kind(), "IndexError"),
                },
                ListOp::Set(i, v) => match norm(i, model.len()) {
                    Some(j) => { l.set(i, v).unwrap(); model[j] = v; }
                    None => prop_assert!(l.set(i, v).is_err()),
                },
                ListOp::Reverse => { l.reverse().unwrap(); model.reverse(); }
                ListOp::Clear => { l.clear().unwrap(); model.clear(); }
            }
            prop_assert_eq!(l.len(), model.len());
        }
        prop_assert_eq!(l.to_vec().unwrap(), model);
    }

    #[test]
    fn dict_matches_an_insertion_ordered_model(ops in proptest::collection::vec((any::<bool>(), 0i64..16, any::<i64>()), 0..80)) {
        let d: Dict<i64, i64> = Dict::new().unwrap();
        let mut model: Vec<(i64, i64)> = Vec::new();
        for (insert, k, v) in ops {
            if insert {
                d.insert(k, v).unwrap();
                match model.iter_mut().find(|e| e.0 == k) {
                    Some(e) => e.1 = v, // an existing key keeps its position
                    None => model.push((k, v)),
                }
            } else {
                let want = model.iter().position(|e| e.0 == k).map(|p| model.remove(p).1);
                prop_assert_eq!(d.remove(&k).unwrap(), want);
            }
        }
        prop_assert_eq!(d.to_vec().unwrap(), model.clone());
        for (k, v) in &model {
            prop_assert_eq!(d.get(k).unwrap(), Some(*v));
        }
    }

    #[test]
    fn array_clone_unchanged_by_mutations(initial in proptest::collection::vec(any::<i64>(), 0..20),
                                          pushes in proptest::collection::vec(any::<i64>(), 1..20)) {
        let mut a: Array<i64> = initial.clone().into();
        let b = a.clone();
        for (n, v) in pushes.iter().enumerate() {
            a.push(*v).unwrap();
            if n % 3 == 0 && !a.is_empty() { a.set(0, v.wrapping_add(1)).unwrap(); }
        }
        prop_assert_eq!(b.to_vec(), initial.clone());
        prop_assert_eq!(a.len(), initial.len() + pushes.len());
        prop_assert_eq!(b.get(initial.len() as i64).unwrap_err().kind(), "IndexError");
    }

    #[test]
    fn map_clone_unchanged_by_mutations(initial in proptest::collection::vec((0i64..32, any::<i64>()), 0..20),
                                        changes in proptest::collection::vec((0i64..32, any::<i64>(), any::<bool>()), 1..20)) {
        let mut m: Map<i64, i64> = initial.iter().cloned().collect();
        let before: Vec<(i64, i64)> = m.clone().into();
        let snapshot = m.clone();
        for (k, v, erase) in changes {
            if erase { m.remove(&k).unwrap(); } else { m.insert(k, v).unwrap(); }
        }
        let after: Vec<(i64, i64)> = snapshot.into();
        prop_assert_eq!(after, before);
    }
}
