//! Structural kinds, definition fields and `map_free_vars` from Rust: types made with
//! `reflected_type!`, their kinds set with `TypeInfo::set_structural_kind`, compared
//! with the `_with` functions (C's `ffk_structural_*_opts`). The answers are tvm_ffi
//! 0.1.15's for the same types (tests/containers/structural_vars_test.cc has the rest).
use ffikit::{
    first_structural_mismatch, first_structural_mismatch_with, structural_eq, structural_eq_with, structural_hash,
    structural_hash_with, Any, Array, StructuralKind, StructuralOptions,
};
use std::sync::OnceLock;

ffikit::reflected_type! {
    /// A variable whose name is not compared.
    #[type_key = "rstest.vars.Var", layout = VarLayout]
    pub struct Var {
        #[flags(COMPARE_OFF)]
        name: String,
    }
}

ffikit::reflected_type! {
    /// A tree.
    #[type_key = "rstest.vars.Add", layout = AddLayout]
    pub struct Add {
        a: Any,
        b: Any,
    }
}

ffikit::reflected_type! {
    /// Its parameter is a definition region.
    #[type_key = "rstest.vars.Lam", layout = LamLayout]
    pub struct Lam {
        #[flags(S_DEF)]
        param: Any,
        body: Any,
    }
}

ffikit::reflected_type! {
    /// A dag node.
    #[type_key = "rstest.vars.Node", layout = NodeLayout]
    pub struct Node {
        v: i64,
    }
}

fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        Var::type_info().unwrap().set_structural_kind(StructuralKind::Var).unwrap();
        Node::type_info().unwrap().set_structural_kind(StructuralKind::Dag).unwrap();
    });
}

const MAP: StructuralOptions = StructuralOptions { map_free_vars: true };

fn var(name: &str) -> Any {
    Any::from(&Var::new(name.to_string()).unwrap())
}
fn add(a: &Any, b: impl Into<Any>) -> Any {
    Any::from(&Add::new(a.clone(), b.into()).unwrap())
}
fn lam(p: &Any, body: Any) -> Any {
    Any::from(&Lam::new(p.clone(), body).unwrap())
}
fn paths(a: &Any, b: &Any, options: StructuralOptions) -> Option<(String, String)> {
    first_structural_mismatch_with(a, b, options).unwrap().map(|(l, r)| (l.to_string(), r.to_string()))
}

#[test]
fn a_definition_field_binds_its_variable() {
    setup();
    let (x, y) = (var("x"), var("y"));
    let (lx, ly) = (lam(&x, add(&x, 1i64)), lam(&y, add(&y, 1i64)));
    assert!(structural_eq(&lx, &ly).unwrap());
    assert_eq!(structural_hash(&lx).unwrap(), structural_hash(&ly).unwrap());
    assert!(first_structural_mismatch(&lx, &ly).unwrap().is_none());
    let wrong = lam(&y, add(&x, 1i64));
    assert!(!structural_eq(&lx, &wrong).unwrap());
    let body_a = ("<root>.body.a".to_string(), "<root>.body.a".to_string());
    assert_eq!(paths(&lx, &wrong, StructuralOptions::default()), Some(body_a));
}

#[test]
fn map_free_vars_binds_free_variables_one_to_one() {
    setup();
    let (x, y, z) = (var("x"), var("y"), var("z"));
    let (ax, ay) = (add(&x, 1i64), add(&y, 1i64));
    assert!(!structural_eq(&ax, &ay).unwrap());
    assert!(!structural_eq_with(&ax, &ay, StructuralOptions::default()).unwrap());
    assert!(structural_eq_with(&ax, &ay, MAP).unwrap());
    assert_eq!(structural_hash_with(&ax, MAP).unwrap(), structural_hash_with(&ay, MAP).unwrap());
    assert_ne!(structural_hash(&ax).unwrap(), structural_hash(&ay).unwrap());
    assert_eq!(paths(&ax, &ay, StructuralOptions::default()), Some(("<root>.a".into(), "<root>.a".into())));
    assert_eq!(paths(&ax, &ay, MAP), None);
    let (xx, yz) = (add(&x, x.clone()), add(&y, z.clone()));
    assert!(!structural_eq_with(&xx, &yz, MAP).unwrap(), "one variable cannot bind to two");
    assert_eq!(paths(&xx, &yz, MAP), Some(("<root>.b".into(), "<root>.b".into())));
}

#[test]
fn dag_nodes_must_be_shared_alike() {
    setup();
    let node = || Any::from(&Node::new(1).unwrap());
    let (n, m1, m2) = (node(), node(), node());
    let nn: Array<Any> = vec![n.clone(), n.clone()].into();
    let m1m1: Array<Any> = vec![m1.clone(), m1.clone()].into();
    let m1m2: Array<Any> = vec![m1.clone(), m2.clone()].into();
    assert!(structural_eq(&nn, &m1m1).unwrap());
    assert!(!structural_eq(&nn, &m1m2).unwrap());
    assert_eq!(structural_hash(&nn).unwrap(), structural_hash(&m1m1).unwrap());
}
