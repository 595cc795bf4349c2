//! Structural tools from Rust: equality and hashing by content (containers, C-defined and
//! Rust-defined reflected objects, compare-off fields, per-type hooks set as type
//! attributes), first mismatches as access paths with tvm_ffi's texts, deep copies with
//! sharing and cycles kept, C's errors, and property tests against the equality itself.
mod common;
use common::{live, testing_module, tree, Tree};
use ffikit::{
    deep_copy, first_structural_mismatch, structural_eq, structural_hash, AccessKind, AccessPath, Any, AnyView, Array,
    Dict, ErrorKind, Function, List, Map, ObjectRef, ObjectType, Reflect, TypeInfo,
};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

ffikit::reflected_type! {
    /// A node whose type supplies its own structural hooks: only `x` counts.
    #[type_key = "rstest.structural.Hooked", layout = HookedLayout]
    pub struct Hooked {
        x: Any,
        tag: String = "t".to_string(),
    }
}

ffikit::reflected_type! {
    /// A node with a compare-off field.
    #[type_key = "rstest.structural.Labeled", layout = LabeledLayout]
    pub struct Labeled {
        v: i64,
        #[flags(COMPARE_OFF)]
        note: String = "".to_string(),
        child: Any = Any::none(),
    }
}

/// Serialises the tests that count live objects (the counter is process-wide).
static LOCK: Mutex<()> = Mutex::new(());

/// Registers what the tests use (types, hooks, the testing module), so that what stays
/// alive until exit exists before any count.
fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        testing_module();
        Labeled::type_index().unwrap();
        let t = Hooked::type_info().unwrap();
        // __s_equal__(a, b, equal): x through the walk's own `equal`, named "x" for paths.
        let eq = Function::from_packed("rstest.Hooked.__s_equal__", |args: &[AnyView]| {
            let (a, b) = (args[0].to_object()?, args[1].to_object()?);
            let equal: Function = args[2].to()?;
            let (ax, bx) = (a.field_any("x")?, b.field_any("x")?);
            if ax.as_str().ok() == Some("raise") {
                return Err(ffikit::Error::of(ErrorKind::Value, "the hook refuses `raise`"));
            }
            if ax.as_str().ok() == Some("unequal") {
                return Ok(Any::from(false)); // a difference the hook reports itself
            }
            equal.call(&[ax.view(), bx.view(), Any::from("x").view()])
        })
        .unwrap();
        // __s_hash__(v, hash): the hash of x alone.
        let hash = Function::from_packed("rstest.Hooked.__s_hash__", |args: &[AnyView]| {
            let v = args[0].to_object()?;
            let hash: Function = args[1].to()?;
            hash.call(&[v.field_any("x")?.view()])
        })
        .unwrap();
        t.set_attr(TypeInfo::ATTR_S_EQUAL, &eq).unwrap();
        t.set_attr(TypeInfo::ATTR_S_HASH, &hash).unwrap();
    });
}

/// Runs `f` alone and checks that it leaves no object alive (in testing builds of the C
/// library, where objects are counted; valgrind covers the others: `run.sh valgrind`).
fn no_leaks(f: impl FnOnce()) {
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    setup();
    let before = live(-1);
    f();
    assert_eq!(live(-1), before, "objects left alive");
}

fn testing_type(key: &str) -> TypeInfo {
    testing_module();
    TypeInfo::lookup(key).unwrap().unwrap_or_else(|| panic!("{} is not registered", key))
}

fn base(v_i64: i64, v_str: &str) -> ObjectRef {
    let s = Any::from(v_str);
    testing_type("testing.TestObjectBase").create(&[], &[("v_i64", AnyView::from(v_i64)), ("v_str", s.view())]).unwrap()
}

fn arr(items: Vec<Any>) -> Any {
    Any::from(&Array::<Any>::from(items))
}

fn paths(a: impl Into<Any>, b: impl Into<Any>) -> Option<(String, String)> {
    let (a, b) = (a.into(), b.into());
    first_structural_mismatch(&a, &b).unwrap().map(|(l, r)| (l.to_string(), r.to_string()))
}

fn pair(l: &str, r: &str) -> Option<(String, String)> {
    Some((l.to_string(), r.to_string()))
}

#[test]
fn containers_compare_and_hash_by_content_with_cs_rules() {
    no_leaks(|| {
        let a: Array<i64> = vec![1, 2, 3].into();
        let b: Array<i64> = vec![1, 2, 3].into();
        assert!(!a.ptr_eq(&b));
        assert!(structural_eq(&a, &b).unwrap());
        assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        let l: List<i64> = vec![1, 2, 3].into();
        assert!(!structural_eq(&a, &l).unwrap(), "an Array never equals a List");
        // 1, true and 1.0 stay distinct; strings by content.
        assert!(!structural_eq(1i64, true).unwrap());
        assert!(!structural_eq(1i64, 1.0).unwrap());
        assert!(structural_eq(&Any::from("a long string, not inline"), &Any::from("a long string, not inline")).unwrap());
        // Maps and Dicts regardless of order.
        let m1: Map<String, i64> = vec![("x".to_string(), 1), ("y".to_string(), 2)].into();
        let m2: Map<String, i64> = vec![("y".to_string(), 2), ("x".to_string(), 1)].into();
        assert!(structural_eq(&m1, &m2).unwrap());
        assert_eq!(structural_hash(&m1).unwrap(), structural_hash(&m2).unwrap());
        let d: Dict<String, i64> = vec![("x".to_string(), 1), ("y".to_string(), 2)].into();
        assert!(!structural_eq(&m1, &d).unwrap(), "a Map never equals a Dict");
        // Any's PartialEq/Hash are the same functions.
        let (x, y) = (Any::from(&a), Any::from(&b));
        assert_eq!(x, y);
        assert_eq!(HashSet::from([x.clone(), y.clone()]).len(), 1);
    });
}

#[test]
fn reflected_objects_compare_field_by_field() {
    no_leaks(|| {
        let (a, b) = (base(3, "same"), base(3, "same"));
        assert!(structural_eq(&a, &b).unwrap());
        assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        let c = base(3, "other");
        assert!(!structural_eq(&a, &c).unwrap());
        assert_eq!(paths(Any::from(&a), Any::from(&c)), pair("<root>.v_str", "<root>.v_str"));
        // A derived type never equals its parent, even with the same inherited fields.
        let m: Map<Any, Any> = Map::new().unwrap();
        let empty: Array<Any> = Array::new().unwrap();
        let derived = testing_type("testing.TestObjectDerived")
            .create(&[], &[("v_i64", AnyView::from(3i64)), ("v_str", Any::from("same").view()), ("v_map", (&m).into()), ("v_array", (&empty).into())])
            .unwrap();
        assert!(!structural_eq(&a, &derived).unwrap());
        assert_eq!(paths(Any::from(&a), Any::from(&derived)), pair("<root>", "<root>"));
        // Objects of Rust-defined types too, fields read through C.
        let (p, q) = (Labeled::new(1, "n".into(), Any::none()).unwrap(), Labeled::new(1, "n".into(), Any::none()).unwrap());
        assert!(structural_eq(&p, &q).unwrap());
        let r = Labeled::new(2, "n".into(), Any::none()).unwrap();
        assert_eq!(paths(Any::from(&p), Any::from(&r)), pair("<root>.v", "<root>.v"));
    });
}

#[test]
fn compare_off_fields_are_skipped_by_equality_hash_and_mismatch() {
    no_leaks(|| {
        let a = Labeled::new(1, "first note".into(), Any::none()).unwrap();
        let b = Labeled::new(1, "another note entirely".into(), Any::none()).unwrap();
        assert!(structural_eq(&a, &b).unwrap());
        assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        assert!(first_structural_mismatch(&a, &b).unwrap().is_none());
    });
}

#[test]
fn mismatch_paths_have_tvm_ffis_shapes() {
    no_leaks(|| {
        let v = |items: Vec<i64>| arr(items.into_iter().map(Any::from).collect());
        // Unequal leaves: both paths end there.
        assert_eq!(paths(v(vec![1, 2]), v(vec![1, 3])), pair("<root>[1]", "<root>[1]"));
        // Lengths 2 and 3.
        assert_eq!(paths(v(vec![1, 2]), v(vec![1, 2, 3])), pair("<root>[<missing:2>]", "<root>[2]"));
        assert_eq!(paths(v(vec![1, 2, 3]), v(vec![1, 2])), pair("<root>[2]", "<root>[<missing:2>]"));
        // A key on one side only.
        let m = |pairs: Vec<(&str, i64)>| {
            let m: Map<String, i64> = pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            Any::from(&m)
        };
        assert_eq!(paths(m(vec![("k", 1), ("j", 2)]), m(vec![("j", 2)])), pair("<root>[\"k\"]", "<root>[<missing:\"k\">]"));
        assert_eq!(paths(m(vec![("j", 2)]), m(vec![("j", 2), ("k", 1)])), pair("<root>[<missing:\"k\">]", "<root>[\"k\"]"));
        // Different types end at the values.
        assert_eq!(paths(Any::from(1i64), Any::from("1")), pair("<root>", "<root>"));
        // Deep in a tree: fields, items and keys together.
        let body = |last: i64| {
            let inner: Map<String, i64> = vec![("k".to_string(), last)].into();
            Labeled::new(0, "".into(), arr(vec![Any::from(0i64), Any::from(&inner)])).unwrap()
        };
        let (x, y) = (body(1), body(2));
        let (l, r) = first_structural_mismatch(&x, &y).unwrap().unwrap();
        assert_eq!((l.to_string(), r.to_string()), ("<root>.child[1][\"k\"]".to_string(), "<root>.child[1][\"k\"]".to_string()));
        assert_eq!(l, r);
        let steps: Vec<(AccessKind, String)> = l.steps().into_iter().map(|s| (s.kind, s.key.to_string())).collect();
        assert_eq!(
            steps,
            [(AccessKind::Attr, "\"child\"".to_string()), (AccessKind::ArrayItem, "1".to_string()), (AccessKind::MapItem, "\"k\"".to_string())]
        );
        // Equal values: no mismatch.
        assert!(first_structural_mismatch(&x, &body(1)).unwrap().is_none());
    });
}

#[test]
fn hooks_set_as_type_attributes_replace_the_field_walk() {
    no_leaks(|| {
        let t = Hooked::type_info().unwrap();
        assert!(t.get_attr(TypeInfo::ATTR_S_EQUAL).unwrap().unwrap().to::<Function>().is_ok());
        assert!(t.get_attr(TypeInfo::ATTR_DATA_TO_JSON).unwrap().is_none());
        // `tag` differs but the hook looks at `x` only.
        let a = Hooked::new(Any::from(1i64), "left".into()).unwrap();
        let b = Hooked::new(Any::from(1i64), "right".into()).unwrap();
        assert!(structural_eq(&a, &b).unwrap());
        assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        assert!(first_structural_mismatch(&a, &b).unwrap().is_none());
        // Without the hooks these would differ: the field walk compares `tag`.
        assert!(!structural_eq(&Labeled::new(1, "".into(), Any::from("left")).unwrap(), &Labeled::new(1, "".into(), Any::from("right")).unwrap()).unwrap());
        // A difference found through the hook's `equal` call is located by its attr name.
        let c = Hooked::new(arr(vec![Any::from(1i64), Any::from(2i64)]), "left".into()).unwrap();
        let d = Hooked::new(arr(vec![Any::from(1i64), Any::from(5i64)]), "left".into()).unwrap();
        assert!(!structural_eq(&c, &d).unwrap());
        assert_ne!(structural_hash(&c).unwrap(), structural_hash(&d).unwrap());
        let (l, r) = first_structural_mismatch(&c, &d).unwrap().unwrap();
        assert_eq!((l.to_string(), r.to_string()), ("<root>.x[1]".to_string(), "<root>.x[1]".to_string()));
        // Inside a container, the hook is reached through the walk.
        let (ca, da) = (arr(vec![Any::from(&c)]), arr(vec![Any::from(&d)]));
        assert_eq!(paths(ca, da), pair("<root>[0].x[1]", "<root>[0].x[1]"));
        // A hook that says "unequal" by itself reports its object.
        let u = Hooked::new(Any::from("unequal"), "".into()).unwrap();
        let v = Hooked::new(Any::from("unequal"), "".into()).unwrap();
        assert!(!structural_eq(&u, &v).unwrap());
        assert_eq!(paths(Any::from(&u), Any::from(&v)), pair("<root>", "<root>"));
        // An error the hook raises ends the walk and is what the call returns.
        let e1 = Hooked::new(Any::from("raise"), "".into()).unwrap();
        let e2 = Hooked::new(Any::from("raise"), "".into()).unwrap();
        let e = structural_eq(&e1, &e2).unwrap_err();
        assert_eq!((e.error_kind(), e.message()), (ErrorKind::Value, "the hook refuses `raise`".to_string()));
        let e = first_structural_mismatch(&e1, &e2).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Value);
    });
}

#[test]
fn type_attributes_are_looked_up_through_the_parent_chain() {
    no_leaks(|| {
        let base = testing_type("testing.TestObjectBase");
        let derived = testing_type("testing.TestObjectDerived");
        base.set_attr("rstest.origin", &Any::from("base")).unwrap();
        assert_eq!(derived.get_attr("rstest.origin").unwrap().unwrap().as_str().unwrap(), "base");
        derived.set_attr("rstest.origin", &Any::none()).unwrap(); // None hides the parent's
        assert!(derived.get_attr("rstest.origin").unwrap().is_none());
        assert_eq!(base.get_attr("rstest.origin").unwrap().unwrap().as_str().unwrap(), "base");
        let e = base.set_attr("", 1i64).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Value);
        assert_eq!(base.set_attr("a\0b", 1i64).unwrap_err().error_kind(), ErrorKind::Value);
        assert_eq!(TypeInfo::ATTR_S_EQUAL, "__s_equal__");
        assert_eq!(TypeInfo::ATTR_S_HASH, "__s_hash__");
        assert_eq!(TypeInfo::ATTR_DATA_TO_JSON, "__data_to_json__");
        assert_eq!(TypeInfo::ATTR_DATA_FROM_JSON, "__data_from_json__");
    });
}

#[test]
fn access_paths_print_compare_and_walk_like_c() {
    no_leaks(|| {
        let root = AccessPath::root().unwrap();
        assert!(root.is_root() && root.parent().is_none() && root.last_step().is_none());
        assert_eq!(root.to_string(), "<root>");
        let cases = [
            (root.attr("body").unwrap(), "<root>.body"),
            (root.array_item(1).unwrap(), "<root>[1]"),
            (root.map_item(&Any::from("k")).unwrap(), "<root>[\"k\"]"),
            (root.map_item(3i64).unwrap(), "<root>[3]"),
            (root.map_item(&Any::none()).unwrap(), "<root>[None]"),
            (root.array_item_missing(2).unwrap(), "<root>[<missing:2>]"),
            (root.map_item_missing(&Any::from("k")).unwrap(), "<root>[<missing:\"k\">]"),
            (root.attr_missing("x").unwrap(), "<root>[<missing:\"x\">]"),
        ];
        for (p, text) in &cases {
            assert_eq!(p.to_string(), *text);
            assert_eq!(p.depth(), 1);
            assert_eq!(p.parent().unwrap(), root);
        }
        let p = root.attr("body").unwrap().array_item(1).unwrap().map_item(&Any::from("k")).unwrap();
        assert_eq!(p.to_string(), "<root>.body[1][\"k\"]");
        assert_eq!(format!("{:?}", p), "AccessPath(<root>.body[1][\"k\"])");
        assert_eq!(p.depth(), 3);
        assert_eq!(p.last_step().unwrap().kind, AccessKind::MapItem);
        assert_eq!(p.last_step().unwrap().key.as_str().unwrap(), "k");
        // Equality is C's (same steps), Hash agrees with it.
        let q = root.attr("body").unwrap().array_item(1).unwrap().map_item(&Any::from("k")).unwrap();
        assert!(!same(&p, &q));
        assert_eq!(p, q);
        assert_eq!(HashSet::from([p.clone(), q.clone()]).len(), 1);
        assert_ne!(p, root.attr("body").unwrap().array_item(2).unwrap().map_item(&Any::from("k")).unwrap());
        assert_ne!(root.array_item(1).unwrap(), root.map_item(1i64).unwrap(), "kinds differ");
        // Prefixes.
        assert!(root.is_prefix_of(&p) && p.is_prefix_of(&p) && p.parent().unwrap().is_prefix_of(&p));
        assert!(!p.is_prefix_of(&p.parent().unwrap()));
        assert!(!root.attr("head").unwrap().is_prefix_of(&p));
        // Extending never changes the parent.
        let parent = p.parent().unwrap();
        let _child = parent.array_item(7).unwrap();
        assert_eq!(parent.to_string(), "<root>.body[1]");
        // C checks the keys.
        assert_eq!(root.extend(AccessKind::ArrayItem, &Any::from("one")).unwrap_err().error_kind(), ErrorKind::Type);
        assert_eq!(root.extend(AccessKind::Attr, 1i64).unwrap_err().error_kind(), ErrorKind::Type);
        // Downcasts are checked.
        let o: ObjectRef = p.clone().into();
        assert_eq!(o.type_name(), "ffikit.AccessPath");
        assert_eq!(o.downcast::<AccessPath>().unwrap(), p);
        let not_path: ObjectRef = Array::<i64>::new().unwrap().into();
        assert_eq!(not_path.downcast::<AccessPath>().unwrap_err().error_kind(), ErrorKind::Type);
    });
}

/// Whether two handles hold the same object.
fn same<T: ObjectType>(a: &T, b: &T) -> bool {
    a.as_object().ptr_eq(b.as_object())
}

#[test]
fn deep_copy_copies_mutables_and_objects_and_keeps_sharing_and_cycles() {
    no_leaks(|| {
        let inner: List<i64> = vec![1].into();
        let outer: List<Any> = vec![Any::from(&inner), Any::from(&inner)].into();
        let copy: List<List<i64>> = deep_copy(&outer).unwrap().to().unwrap();
        assert!(structural_eq(&outer, &copy).unwrap());
        let (c0, c1) = (copy.get(0).unwrap(), copy.get(1).unwrap());
        assert!(c0.ptr_eq(&c1), "a List reached twice is copied once");
        assert!(!c0.ptr_eq(&inner));
        inner.push(2).unwrap();
        assert_eq!(c0.len(), 1);
        // A List that contains itself yields a copy that contains itself.
        let cyc: List<Any> = List::new().unwrap();
        cyc.push(Any::from(&cyc)).unwrap();
        let cc: List<Any> = deep_copy(&cyc).unwrap().to().unwrap();
        assert!(!cc.ptr_eq(&cyc));
        assert!(cc.get(0).unwrap().to::<List<Any>>().unwrap().ptr_eq(&cc));
        assert!(structural_eq(&cyc, &cc).unwrap(), "cycles end");
        cyc.clear().unwrap();
        cc.clear().unwrap();
        // Reflected objects are copied field by field, into new objects.
        let o = base(4, "copied");
        let oc = deep_copy(&o).unwrap().to_object().unwrap();
        assert!(!oc.ptr_eq(&o));
        assert!(structural_eq(&o, &oc).unwrap());
        assert_eq!(oc.field::<String>("v_str").unwrap(), "copied");
        let l = Labeled::new(1, "n".into(), Any::from(&outer)).unwrap();
        let lc: Labeled = deep_copy(&l).unwrap().to().unwrap();
        assert!(!same(&lc, &l));
        assert!(structural_eq(&l, &lc).unwrap());
        let child: List<Any> = lc.child().unwrap().to().unwrap();
        assert!(!child.ptr_eq(&outer));
    });
}

#[test]
fn nesting_deeper_than_the_limit_is_a_runtime_error() {
    no_leaks(|| {
        // Lists, which deep_copy always copies, so every walk goes all the way down.
        let deep = || {
            let mut v = Any::from(0i64);
            for _ in 0..1100 {
                v = Any::from(&List::<Any>::from(vec![v]));
            }
            v
        };
        let (a, b) = (deep(), deep());
        for e in [
            structural_eq(&a, &b).unwrap_err(),
            structural_hash(&a).unwrap_err(),
            first_structural_mismatch(&a, &b).unwrap_err(),
            deep_copy(&a).unwrap_err(),
        ] {
            assert_eq!(e.error_kind(), ErrorKind::Runtime, "{}", e);
        }
    });
}

// ---- Properties ---------------------------------------------------------------------------

/// Random values: small ints, floats, bools, short strings and None at the leaves (so that
/// two random values are often equal), containers and Labeled objects above them.
fn value() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        Just(Tree::None),
        (-3i64..3).prop_map(Tree::Int),
        any::<bool>().prop_map(Tree::Bool),
        prop_oneof![Just(0.5), Just(-1.25), Just(1e300)].prop_map(Tree::Float),
        "[a-c]{0,10}".prop_map(Tree::Str),
    ];
    tree(leaf.boxed(), "[a-c]{1,2}")
}

fn labeled(v: i64, child: Any) -> Any {
    Any::from(&Labeled::new(v, "note".into(), child).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_value_equals_and_hashes_like_its_deep_copy(v in value()) {
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        setup();
        let v = v.build(&labeled);
        let c = deep_copy(&v).unwrap();
        prop_assert!(structural_eq(&v, &c).unwrap());
        prop_assert_eq!(structural_hash(&v).unwrap(), structural_hash(&c).unwrap());
        prop_assert!(first_structural_mismatch(&v, &c).unwrap().is_none());
    }

    #[test]
    fn a_mismatch_exists_exactly_when_values_differ(a in value(), b in value()) {
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        setup();
        let (a, b) = (a.build(&labeled), b.build(&labeled));
        let eq = structural_eq(&a, &b).unwrap();
        prop_assert_eq!(eq, structural_eq(&b, &a).unwrap(), "symmetric");
        let m = first_structural_mismatch(&a, &b).unwrap();
        prop_assert_eq!(m.is_none(), eq);
        if eq {
            prop_assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        }
        if let Some((l, r)) = m {
            // Both paths walk the same route down to the difference.
            prop_assert_eq!(l.depth(), r.depth());
            let (ls, rs) = (l.steps(), r.steps());
            let common = ls.len().saturating_sub(1);
            prop_assert_eq!(&ls[..common], &rs[..common]);
        }
    }
}
