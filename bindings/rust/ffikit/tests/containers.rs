//! Array/Map copy-on-write, List/Dict sharing, typed elements, iteration, conversions.
use ffikit::{Any, Array, Dict, List, Map, ObjectRef, Str, Tuple};
use std::collections::{BTreeMap, HashMap};

#[test]
fn array_mutation_copies_when_shared_and_leaves_the_clone_unchanged() {
    let mut a: Array<i64> = Array::new().unwrap();
    for i in 0..3 {
        a.push(i * 10).unwrap();
    }
    let b = a.clone();
    assert!(a.ptr_eq(&b));
    assert_eq!((a.use_count(), b.use_count()), (2, 2));
    a.push(30).unwrap(); // shared: a gets a copy
    assert!(!a.ptr_eq(&b));
    assert_eq!((a.len(), b.len()), (4, 3));
    assert_eq!((a.use_count(), b.use_count()), (1, 1));
    assert_eq!((a.get(-1).unwrap(), b.get(-1).unwrap()), (30, 20));
    let before = a.as_object().as_ptr();
    a.set(0, 7).unwrap(); // unique: in place
    assert_eq!(a.as_object().as_ptr(), before);
    assert_eq!(a.to_vec(), vec![7, 10, 20, 30]);
    assert_eq!(b.to_vec(), vec![0, 10, 20]);
}

use ffikit::ObjectType;

#[test]
fn array_errors_carry_the_c_texts() {
    let mut a: Array<i64> = vec![1].into();
    assert_eq!(a.get(7).unwrap_err().to_string(), "IndexError: Array index 7 out of range for size 1");
    assert_eq!(a.pop().unwrap(), 1);
    assert_eq!(a.pop().unwrap_err().to_string(), "IndexError: pop from empty Array");
    assert!(!unsafe { ffikit::sys::ffk_error_occurred() }); // fetched, slot empty
}

#[test]
fn array_index_iter_and_conversions() {
    let mut a: Array<i64> = (1..=4).collect();
    assert_eq!(a[2], 3);
    assert_eq!((&a).into_iter().sum::<i64>(), 10);
    a.extend(vec![5, 6]);
    a.insert(0, 0).unwrap();
    assert_eq!(a.remove(1).unwrap(), 1);
    assert!(a.contains(&6) && !a.contains(&1));
    let v: Vec<i64> = a.clone().into();
    assert_eq!(v, vec![0, 2, 3, 4, 5, 6]);
    a.clear().unwrap();
    assert!(a.is_empty());

    let s: Array<Str> = vec![Str::new("one").unwrap(), Str::new("two").unwrap()].into();
    assert_eq!(&*s[1], "two");
    let nested: Array<Array<i64>> = vec![vec![1, 2].into(), Array::new().unwrap()].into();
    assert_eq!(nested.to_string(), "((1, 2), ())");
    assert_eq!(Array::<Array<i64>>::schema(), "Array<Array<int>>");
}

#[test]
#[should_panic(expected = "Array index 3 out of range for size 1")]
fn array_index_out_of_range_panics() {
    let a: Array<i64> = vec![1].into();
    let _ = a[3];
}

#[test]
fn untyped_array_holds_anything() {
    let mut a: Array = Array::new().unwrap();
    a.push(Any::from(1i64)).unwrap();
    a.push(Any::from("two")).unwrap();
    a.push(Any::from(3.5)).unwrap();
    assert_eq!(a.to_string(), "(1, \"two\", 3.5)");
    assert_eq!(a[1].as_str().unwrap(), "two");
    // The same object seen as typed fails on the str.
    assert!(ObjectRef::from(a).downcast::<Array<f64>>().is_err());
}

#[test]
fn tuple_is_copy_on_write() {
    let t = Tuple::new(&[Any::from(1i64), Any::from("a")]).unwrap();
    let mut u = t.clone();
    u.set(1, Any::from("b")).unwrap();
    assert_eq!((t.to_string(), u.to_string()), ("(1, \"a\")".into(), "(1, \"b\")".into()));
    assert_eq!(u[0].to::<i64>().unwrap(), 1);
    assert_eq!(u.len(), 2);
}

#[test]
fn map_is_copy_on_write_and_ordered() {
    let mut m: Map<i64, String> = Map::new().unwrap();
    for i in [3, 1, 2] {
        m.insert(i, format!("v{}", i)).unwrap();
    }
    let snapshot = m.clone();
    m.insert(1, "changed".into()).unwrap();
    assert!(m.remove(&3).unwrap());
    assert!(!m.remove(&99).unwrap());
    assert_eq!(m.keys(), vec![1, 2]);
    assert_eq!(snapshot.keys(), vec![3, 1, 2]);
    assert_eq!(snapshot.get(&1), Some("v1".to_string()));
    assert_eq!(m.get(&1), Some("changed".to_string()));
    assert_eq!(m.values(), vec!["changed".to_string(), "v2".to_string()]);
    assert!(m.contains_key(&2) && !m.contains_key(&3));
    let pairs: Vec<(i64, String)> = m.clone().into();
    assert_eq!(pairs[0], (1, "changed".to_string()));
    let h: HashMap<i64, String> = m.clone().into();
    let b: BTreeMap<i64, String> = m.clone().into();
    assert_eq!((h.len(), b.len()), (2, 2));
    let back: Map<i64, String> = b.into();
    assert_eq!(back, m); // structural: same entries
}

#[test]
fn list_is_shared_between_clones() {
    let l: List<i64> = List::new().unwrap();
    let alias = l.clone();
    l.push(1).unwrap();
    alias.push(2).unwrap();
    alias.insert(0, 0).unwrap();
    assert_eq!(l.to_vec().unwrap(), vec![0, 1, 2]);
    assert_eq!(l.pop(-1).unwrap(), 2);
    l.set(0, 10).unwrap();
    l.reverse().unwrap();
    assert_eq!(alias.to_vec().unwrap(), vec![1, 10]);
    assert!(l.contains(&10));
    let collected: Vec<i64> = l.iter().map(|r| r.unwrap()).collect();
    assert_eq!(collected, vec![1, 10]);
    assert_eq!(l.to_string(), "[1, 10]");
    l.clear().unwrap();
    assert!(alias.is_empty());
}

#[test]
fn list_iteration_reports_a_change_instead_of_reading_freed_memory() {
    let l: List<i64> = (0..5).collect();
    let mut seen = Vec::new();
    let mut errors = Vec::new();
    for item in &l {
        match item {
            Ok(x) => {
                seen.push(x);
                if x == 1 {
                    l.pop(-1).unwrap();
                }
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert_eq!(seen, vec![0, 1]);
    assert_eq!(errors, vec!["RuntimeError: List changed during iteration".to_string()]);
}

#[test]
fn typed_list_checks_values_stored_by_other_handles_on_the_way_out() {
    let untyped: List = List::new().unwrap();
    untyped.push(Any::from(1i64)).unwrap();
    let typed: List<i64> = ObjectRef::from(untyped.clone()).downcast().unwrap();
    untyped.push(Any::from("x")).unwrap();
    assert_eq!(typed.get(1).unwrap_err().to_string(), "TypeError: expected int but got str");
    assert!(typed.to_vec().is_err());
}

#[test]
fn dict_is_shared_and_ordered() {
    let d: Dict<String, i64> = Dict::new().unwrap();
    let alias = d.clone();
    d.insert("b".into(), 2).unwrap();
    alias.insert("a".into(), 1).unwrap();
    d.insert("b".into(), 20).unwrap(); // keeps its position
    assert_eq!(d.keys().unwrap(), vec!["b".to_string(), "a".to_string()]);
    assert_eq!(alias.values().unwrap(), vec![20, 1]);
    assert_eq!(d.get(&"a".into()).unwrap(), Some(1));
    assert_eq!(d.get(&"zz".into()).unwrap(), None);
    assert_eq!(d.remove(&"b".into()).unwrap(), Some(20));
    assert_eq!(d.remove(&"b".into()).unwrap(), None);
    let h: HashMap<String, i64> = d.clone().try_into().unwrap();
    assert_eq!(h["a"], 1);
    let from_vec: Dict<String, i64> = vec![("a".to_string(), 1)].into();
    assert_eq!(from_vec, d); // structural equality
    let m: Map<String, i64> = vec![("a".to_string(), 1)].into();
    assert_eq!(m.to_dict().unwrap(), d);
    d.clear().unwrap();
    assert!(alias.is_empty());
}

#[test]
fn dict_iteration_reports_a_change() {
    let d: Dict<i64, i64> = (0..4).map(|i| (i, i * i)).collect();
    let mut items = Vec::new();
    for item in &d {
        match item {
            Ok((k, v)) => {
                items.push((k, v));
                d.insert(100 + k, 0).unwrap();
            }
            Err(e) => {
                assert_eq!(e.to_string(), "RuntimeError: Dict changed during iteration");
                items.push((-1, -1));
            }
        }
    }
    assert_eq!(items, vec![(0, 0), (-1, -1)]);
}

#[test]
fn list_and_array_convert_both_ways() {
    let a: Array<i64> = vec![1, 2, 3].into();
    let l = a.to_list().unwrap();
    l.push(4).unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(l.snapshot().unwrap().to_string(), "(1, 2, 3, 4)");
    let v: Vec<i64> = l.try_into().unwrap();
    assert_eq!(v, vec![1, 2, 3, 4]);
}

#[test]
fn containers_hold_containers() {
    let inner: List<i64> = vec![1].into();
    let outer: Dict<String, List<i64>> = Dict::new().unwrap();
    outer.insert("xs".into(), inner.clone()).unwrap();
    outer.get(&"xs".into()).unwrap().unwrap().push(2).unwrap(); // the same List
    assert_eq!(inner.to_vec().unwrap(), vec![1, 2]);
    assert_eq!(outer.to_string(), "{\"xs\": [1, 2]}");
}

// ---- List slices and extend: one C call each (issue 21) -----------------------------------

/// The indices Python's `l[start:stop:step]` selects (written from the language reference).
fn py_slice(n: i64, start: i64, stop: i64, step: i64) -> Vec<i64> {
    let step = if step == i64::MIN { -i64::MAX } else { step };
    let bound = |v: i64| {
        let v = if v < 0 { if v < -n { if step > 0 { 0 } else { -1 } } else { v + n } } else { v };
        v.min(if step > 0 { n } else { n - 1 })
    };
    let (a, b) = (bound(start), bound(stop));
    let mut out = Vec::new();
    let mut i = a;
    while if step > 0 { i < b } else { i > b } {
        out.push(i);
        if (step > 0 && b - i <= step) || (step < 0 && i - b <= -step) {
            break;
        }
        i += step;
    }
    out
}

#[test]
fn list_slices_follow_python_on_a_grid() {
    let bounds = [i64::MIN, -9, -3, -1, 0, 1, 2, 5, 8, i64::MAX];
    let steps = [i64::MIN, -3, -2, -1, 1, 2, 3, i64::MAX];
    for n in 0..7i64 {
        for &start in &bounds {
            for &stop in &bounds {
                for &step in &steps {
                    let what = format!("n {} [{}:{}:{}]", n, start, stop, step);
                    let idx = py_slice(n, start, stop, step);
                    let l: List<i64> = (0..n).collect();
                    assert_eq!(l.slice(start, stop, step).unwrap(), idx, "read {}", what);
                    l.delete_slice(start, stop, step).unwrap();
                    let kept: Vec<i64> = (0..n).filter(|i| !idx.contains(i)).collect();
                    assert_eq!(l.to_vec().unwrap(), kept, "del {}", what);
                    if step != 1 {
                        let l: List<i64> = (0..n).collect();
                        let k = idx.len() as i64;
                        let e = l.set_slice(start, stop, step, 100..101 + k).unwrap_err();
                        assert_eq!(
                            e.to_string(),
                            format!("ValueError: attempt to assign sequence of size {} to extended slice of size {}", k + 1, k)
                        );
                        assert_eq!(l.to_vec().unwrap(), (0..n).collect::<Vec<_>>(), "unchanged {}", what);
                        l.set_slice(start, stop, step, 100..100 + k).unwrap();
                        let mut want: Vec<i64> = (0..n).collect();
                        for (j, &i) in idx.iter().enumerate() {
                            want[i as usize] = 100 + j as i64;
                        }
                        assert_eq!(l.to_vec().unwrap(), want, "assign {}", what);
                    }
                }
            }
        }
    }
    let l: List<i64> = (0..3).collect();
    for e in [l.slice(0, 1, 0).unwrap_err(), l.delete_slice(0, 1, 0).unwrap_err(), l.set_slice(0, 1, 0, [1]).unwrap_err()] {
        assert_eq!(e.to_string(), "ValueError: slice step cannot be zero");
    }
    l.set_slice(1, 2, 1, [7, 8, 9]).unwrap(); // step 1: any length
    assert_eq!(l.to_vec().unwrap(), vec![0, 7, 8, 9, 2]);
    l.set_slice_from(i64::MAX, i64::MIN, -1, &l.clone()).unwrap();
    assert_eq!(l.to_vec().unwrap(), vec![2, 9, 8, 7, 0]);
    let other: List<i64> = vec![1, 2].into();
    assert!(l.set_slice_from(0, i64::MAX, 2, &other).is_err(), "3 selected, 2 given");
    assert_eq!(l.to_vec().unwrap(), vec![2, 9, 8, 7, 0]);
}

/// An element type whose conversion fails for odd numbers.
#[derive(Clone, Debug, PartialEq)]
struct Even(i64);

impl ffikit::Element for Even {
    fn schema() -> String {
        "int".into()
    }
    fn into_any(self) -> ffikit::Result<Any> {
        if self.0 % 2 == 0 {
            Ok(Any::from(self.0))
        } else {
            Err(ffikit::Error::new("ValueError", &format!("{} is odd", self.0)))
        }
    }
    fn from_view(v: &ffikit::sys::ffk_any) -> ffikit::Result<Self> {
        i64::from_view(v).map(Even)
    }
}

#[test]
fn list_extend_is_all_or_nothing() {
    let l: List<Even> = vec![Even(0)].into();
    // More values than the 256 the crate once appended per call: none may land.
    let e = l.try_extend((2..1000).map(|i| Even(if i == 999 { i } else { i * 2 }))).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: 999 is odd");
    assert_eq!(l.to_vec().unwrap(), vec![Even(0)]);
    assert!(l.set_slice(0, i64::MAX, 1, [Even(2), Even(3)]).is_err());
    assert_eq!(l.to_vec().unwrap(), vec![Even(0)]);
    l.try_extend((1..300).map(|i| Even(2 * i))).unwrap();
    assert_eq!(l.len(), 300);
}

// ---- Short strings and bytes (stored inline, with no object) are Str / Bytes -------------

#[test]
fn inline_strings_and_bytes_read_back_as_str_and_bytes() {
    let untyped: Array = vec![Any::from("short"), Any::from("a string longer than 7 bytes"), Any::from("")].into();
    assert_eq!(untyped.as_views()[0].type_name(), "str");
    let a: Array<Str> = ObjectRef::from(untyped.clone()).downcast().unwrap();
    let texts: Vec<String> = a.iter().map(|s| s.as_str().to_string()).collect();
    assert_eq!(texts, vec!["short", "a string longer than 7 bytes", ""]);
    assert_eq!(a.get(0).unwrap().as_str(), "short");
    assert_eq!(a.get(-1).unwrap().len(), 0);

    let l: List<Str> = ObjectRef::from(untyped.to_list().unwrap()).downcast().unwrap();
    assert_eq!(l.get(0).unwrap().as_str(), "short");
    assert_eq!(l.pop(0).unwrap().as_str(), "short");
    assert_eq!(l.to_vec().unwrap().len(), 2);
    assert_eq!(l.iter().map(|s| s.unwrap().len()).collect::<Vec<_>>(), vec![28, 0]);

    let bytes: Array = vec![Any::from(&b"\x00\x01"[..]), Any::from(&b"eight by"[..])].into();
    let b: Array<ffikit::Bytes> = ObjectRef::from(bytes).downcast().unwrap();
    assert_eq!(b.get(0).unwrap().as_bytes(), b"\x00\x01");
    assert_eq!(b.to_vec()[1].as_bytes(), b"eight by");
    let bl: List<ffikit::Bytes> = b.to_list().unwrap();
    assert_eq!(bl.get(0).unwrap().as_bytes(), b"\x00\x01");

    // Map keys and values.
    let mut m: Map<Str, Str> = Map::new().unwrap();
    m.insert(Str::new("k").unwrap(), Str::new("v").unwrap()).unwrap();
    let untyped_map: Map = vec![(Any::from("key"), Any::from("val"))].into();
    let typed: Map<Str, Str> = ObjectRef::from(untyped_map).downcast().unwrap();
    assert_eq!(typed.keys()[0].as_str(), "key");
    assert_eq!(typed.get(&Str::new("key").unwrap()).unwrap().as_str(), "val");
    assert_eq!(m.iter().map(|(k, v)| (k.as_str().to_string(), v.as_str().to_string())).collect::<Vec<_>>(),
               vec![("k".to_string(), "v".to_string())]);
    let d: Dict<Str, i64> = ObjectRef::from(vec![(Any::from("x"), Any::from(1i64))].into_iter().collect::<Dict>()).downcast().unwrap();
    assert_eq!(d.keys().unwrap()[0].as_str(), "x");
    assert_eq!(d.to_vec().unwrap()[0].0.as_str(), "x");

    // Other kinds are still refused with C's text.
    let e = ObjectRef::from(Array::<Any>::from(vec![Any::from(1i64)])).downcast::<Array<Str>>().unwrap_err();
    assert_eq!(e.to_string(), "TypeError: Array item #0: expected str but got int");
    assert_eq!(Any::from("s").to::<ffikit::Bytes>().unwrap_err().to_string(), "TypeError: expected bytes but got str");
}
