//! The module's Rust-defined type, rustmod.Vec2, through the structural tools and the JSON
//! graph: the document names its fields, reads back as a new Vec2 with the same state,
//! compares and hashes field by field, reports the first differing field, and deep copies;
//! the module's exported wrappers give the same answers as the crate's functions.
use ffikit::{
    deep_copy, first_structural_mismatch, from_json_graph, structural_eq, structural_hash, to_json_graph, Any, AnyView,
    Array, Module, ObjectRef, ObjectType,
};
use ffikit_rustmod::Vec2;
use std::path::PathBuf;

fn module() -> Module {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let p: PathBuf = deps.join("libffikit_rustmod.so");
    Module::load(p.to_str().unwrap()).unwrap()
}

#[test]
fn vec2_round_trips_through_the_json_graph() {
    let v = Vec2::new(3.0, 4.5, "a label longer than seven".into()).unwrap();
    let text = to_json_graph(&v, None).unwrap();
    assert_eq!(
        text,
        r#"{"root_index":1,"nodes":[{"type":"ffi.String","data":"a label longer than seven"},{"type":"rustmod.Vec2","data":{"x":3.0,"y":4.5,"label":0}}]}"#
    );
    let back: Vec2 = from_json_graph(&text).unwrap().to().unwrap();
    assert!(!back.as_object().ptr_eq(v.as_object()));
    assert_eq!((back.x(), back.y(), back.label().unwrap()), (3.0, 4.5, "a label longer than seven".to_string()));
    assert!(structural_eq(&v, &back).unwrap());
    assert_eq!(structural_hash(&v).unwrap(), structural_hash(&back).unwrap());
    // Shared inside a container: one node, one object back.
    let both: Array<Vec2> = vec![v.clone(), v.clone()].into();
    let back: Array<Vec2> = from_json_graph(&to_json_graph(&both, None).unwrap()).unwrap().to().unwrap();
    assert!(back.get(0).unwrap().as_object().ptr_eq(back.get(1).unwrap().as_object()));
    // Fields absent from a document take their defaults (the document restores state).
    let d: Vec2 = from_json_graph(r#"{"root_index":0,"nodes":[{"type":"rustmod.Vec2","data":{"y":2.0}}]}"#).unwrap().to().unwrap();
    assert_eq!((d.x(), d.y(), d.label().unwrap()), (0.0, 2.0, "v".to_string()));
}

#[test]
fn vec2_compares_field_by_field_and_copies_deeply() {
    let a = Vec2::new(1.0, 2.0, "a".into()).unwrap();
    let b = Vec2::new(1.0, 2.0, "b".into()).unwrap();
    let (l, r) = first_structural_mismatch(&a, &b).unwrap().unwrap();
    assert_eq!((l.to_string(), r.to_string()), ("<root>.label".to_string(), "<root>.label".to_string()));
    b.set_label("a".into()).unwrap();
    assert!(first_structural_mismatch(&a, &b).unwrap().is_none());
    let c: Vec2 = deep_copy(&a).unwrap().to().unwrap();
    assert!(!c.as_object().ptr_eq(a.as_object()));
    c.set_x(9.0).unwrap();
    assert_eq!(a.x(), 1.0);
    assert!(!structural_eq(&a, &c).unwrap());
}

#[test]
fn the_exported_wrappers_agree_with_the_crate() {
    let m = module();
    let a = Vec2::new(1.0, 2.0, "a".into()).unwrap();
    let b = Vec2::new(1.0, 2.5, "a".into()).unwrap();
    let call = |name: &str, args: &[AnyView]| m.get_function(name).unwrap().call(args).unwrap();
    assert!(!call("rs_structural_equal", &[a.as_object().view(), b.as_object().view()]).to::<bool>().unwrap());
    let h = call("rs_structural_hash", &[a.as_object().view()]).to::<i64>().unwrap();
    assert_eq!(h as u64, structural_hash(&a).unwrap());
    let paths: Array<ObjectRef> = call("rs_first_mismatch", &[a.as_object().view(), b.as_object().view()]).to().unwrap();
    assert_eq!(paths.get(0).unwrap().to_string(), "<root>.y");
    assert!(call("rs_first_mismatch", &[a.as_object().view(), a.as_object().view()]).is_none());
    let none = Any::none();
    let text = call("rs_to_json_graph", &[a.as_object().view(), none.view()]);
    assert_eq!(text.as_str().unwrap(), to_json_graph(&a, None).unwrap());
    let back = call("rs_from_json_graph", &[text.view()]);
    assert!(structural_eq(&back, &a).unwrap());
    let copy = call("rs_deep_copy", &[a.as_object().view()]);
    assert!(structural_eq(&copy, &a).unwrap());
    let types: Array<String> = call("rs_field_types", &[a.as_object().view()]).to().unwrap();
    assert_eq!(types.iter().collect::<Vec<_>>(), ["x: float", "y: float", "label: str"]);
}
