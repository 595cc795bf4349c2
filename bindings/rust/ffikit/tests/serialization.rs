//! The JSON graph round trip from Rust: documents tvm_ffi 0.1.15 wrote read here and are
//! written back byte for byte, values of C-defined and Rust-defined reflected types round
//! trip with sharing kept, metadata, C's errors for bad values and malformed documents,
//! no objects left alive, and a property test over random values.
mod common;
use common::{live, testing, testing_module, tree, Tree};
use ffikit::{
    from_json_graph, from_json_graph_with_metadata, structural_eq, to_json_graph, Any, AnyView, Array, Bytes, DataType,
    Device, Dict, ErrorKind, Function, List, Map, ObjectRef, ObjectType, Reflect, Tensor, TypeInfo,
};
use proptest::prelude::*;
use std::sync::{Mutex, OnceLock};

ffikit::reflected_type! {
    /// One field of each storage and several signature types.
    #[type_key = "rstest.json.Everything", layout = EverythingLayout]
    pub struct Everything {
        i: i64,
        f: f64,
        b: bool,
        s: String,
        by: Vec<u8>,
        a: Any,
        arr: Array<i64>,
        m: Map<String, Any>,
        dt: DataType,
        dev: Device,
        #[flags(COMPARE_OFF)]
        note: String = "n".to_string(),
    }
}

ffikit::reflected_type! {
    /// A small node for random trees.
    #[type_key = "rstest.json.Node", layout = NodeLayout]
    pub struct Node {
        v: i64,
        child: Any = Any::none(),
    }
}

static LOCK: Mutex<()> = Mutex::new(());

fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        testing_module();
        Everything::type_index().unwrap();
        Node::type_index().unwrap();
    });
}

/// Runs `f` alone and checks that it leaves no object alive (testing builds of the C
/// library count them; `run.sh valgrind` covers the others).
fn no_leaks(f: impl FnOnce()) {
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    setup();
    let before = live(-1);
    f();
    assert_eq!(live(-1), before, "objects left alive");
}

fn same<T: ObjectType>(a: &T, b: &T) -> bool {
    a.as_object().ptr_eq(b.as_object())
}

fn create(key: &str, kwargs: &[(&str, Any)]) -> ObjectRef {
    testing_module();
    let t = TypeInfo::lookup(key).unwrap().unwrap();
    let named: Vec<(&str, AnyView)> = kwargs.iter().map(|(k, v)| (*k, v.view())).collect();
    t.create(&[], &named).unwrap()
}

/// Documents apache-tvm-ffi 0.1.15 wrote (`tvm_ffi.serialization.to_json_graph_str`).
mod golden {
    /// `[1, 2.5, "hello", None, True, {"k": [1, 2]}, "hello"]`
    pub const LIST: &str = r#"{"root_index":9,"nodes":[{"type":"int","data":1},{"type":"float","data":2.5},{"type":"ffi.String","data":"hello"},{"type":"None"},{"type":"bool","data":true},{"type":"ffi.String","data":"k"},{"type":"int","data":2},{"type":"ffi.Array","data":[0,6]},{"type":"ffi.Map","data":[5,7]},{"type":"ffi.Array","data":[0,1,2,3,4,8,2]}]}"#;
    /// The same, with metadata `{"author": "tvm"}`.
    pub const LIST_META: &str = r#"{"root_index":9,"nodes":[{"type":"int","data":1},{"type":"float","data":2.5},{"type":"ffi.String","data":"hello"},{"type":"None"},{"type":"bool","data":true},{"type":"ffi.String","data":"k"},{"type":"int","data":2},{"type":"ffi.Array","data":[0,6]},{"type":"ffi.Map","data":[5,7]},{"type":"ffi.Array","data":[0,1,2,3,4,8,2]}],"metadata":{"author":"tvm"}}"#;
    /// `testing.TestIntPair(a=1, b=2)`
    pub const PAIR: &str = r#"{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"b":2}}]}"#;
    /// `[p, p]` for one TestIntPair p.
    pub const SHARED_PAIR: &str = r#"{"root_index":1,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"b":2}},{"type":"ffi.Array","data":[0,0]}]}"#;
    /// `testing.TestObjectBase(v_i64=3, v_str="hi")`
    pub const BASE: &str = r#"{"root_index":1,"nodes":[{"type":"ffi.String","data":"hi"},{"type":"testing.TestObjectBase","data":{"v_i64":3,"v_f64":10.0,"v_str":0}}]}"#;
    /// `float32`, `Shape(2, 3)`
    pub const DTYPE: &str = r#"{"root_index":0,"nodes":[{"type":"DataType","data":"float32"}]}"#;
    pub const SHAPE: &str = r#"{"root_index":0,"nodes":[{"type":"ffi.Shape","data":[2,3]}]}"#;
}

#[test]
fn tvm_ffi_documents_read_and_are_written_back_identically() {
    no_leaks(|| {
        let v = from_json_graph(golden::LIST).unwrap();
        let items: Array<Any> = v.to().unwrap();
        assert_eq!(v.to_string(), "(1, 2.5, \"hello\", None, True, {\"k\": (1, 2)}, \"hello\")"); // C's repr of Arrays
        assert_eq!(items.len(), 7);
        let k: Map<String, Array<i64>> = items.get(5).unwrap().to().unwrap();
        assert_eq!(k.get(&"k".to_string()).unwrap().iter().collect::<Vec<_>>(), [1, 2]);
        for (doc, text) in [
            (golden::LIST, None),
            (golden::PAIR, Some("testing.TestIntPair(a=1, b=2)")),
            (golden::SHARED_PAIR, None),
            (golden::BASE, Some("testing.TestObjectBase(v_i64=3, v_f64=10.0, v_str=\"hi\")")),
            (golden::DTYPE, Some("float32")),
            (golden::SHAPE, None),
        ] {
            let v = from_json_graph(doc).unwrap();
            if let Some(text) = text {
                assert_eq!(v.to_string(), text);
            }
            assert_eq!(to_json_graph(&v, None).unwrap(), doc, "written back differently");
        }
        // Sharing: one TestIntPair node, one object.
        let shared: Array<ObjectRef> = from_json_graph(golden::SHARED_PAIR).unwrap().to().unwrap();
        assert!(shared.get(0).unwrap().ptr_eq(&shared.get(1).unwrap()));
        assert_eq!(shared.get(0).unwrap().field::<i64>("b").unwrap(), 2);
        // Metadata both ways.
        let (v, meta) = from_json_graph_with_metadata(golden::LIST_META).unwrap();
        let meta = meta.unwrap();
        assert_eq!(meta.get(&"author".to_string()).unwrap().as_str().unwrap(), "tvm");
        assert_eq!(to_json_graph(&v, Some(&meta)).unwrap(), golden::LIST_META);
        let (_, none) = from_json_graph_with_metadata(golden::LIST).unwrap();
        assert!(none.is_none());
    });
}

#[test]
fn values_built_in_rust_match_what_tvm_ffi_wrote() {
    no_leaks(|| {
        let inner: Array<i64> = vec![1, 2].into();
        let map: Map<String, Array<i64>> = vec![("k".to_string(), inner)].into();
        let list: Array<Any> = vec![
            Any::from(1i64),
            Any::from(2.5),
            Any::from("hello"),
            Any::none(),
            Any::from(true),
            Any::from(&map),
            Any::from("hello"),
        ]
        .into();
        assert_eq!(to_json_graph(&list, None).unwrap(), golden::LIST);
        let pair = create("testing.TestIntPair", &[("a", Any::from(1i64)), ("b", Any::from(2i64))]);
        assert_eq!(to_json_graph(&pair, None).unwrap(), golden::PAIR);
        let both: Array<ObjectRef> = vec![pair.clone(), pair].into();
        assert_eq!(to_json_graph(&both, None).unwrap(), golden::SHARED_PAIR);
    });
}

fn everything() -> Everything {
    let shared: Array<i64> = vec![7, 8, 9].into();
    let m: Map<String, Any> = vec![("xs".to_string(), Any::from(&shared)), ("s".to_string(), Any::from("str"))].into();
    Everything::new(
        -5,
        0.1,
        true,
        "a string longer than seven bytes".into(),
        b"\x00\xffbytes".to_vec(),
        Any::from(&shared),
        shared.clone(),
        m,
        "bfloat16".parse().unwrap(),
        Device::new(2, 1),
        "kept though compare-off".into(),
    )
    .unwrap()
}

#[test]
fn rust_defined_objects_round_trip_with_every_field_and_sharing() {
    no_leaks(|| {
        let e = everything();
        let text = to_json_graph(&e, None).unwrap();
        assert!(text.contains(r#""type":"rstest.json.Everything""#), "{}", text);
        let back: Everything = from_json_graph(&text).unwrap().to().unwrap();
        assert!(!same(&back, &e));
        assert!(structural_eq(&back, &e).unwrap());
        assert_eq!((back.i(), back.f(), back.b()), (-5, 0.1, true));
        assert_eq!(back.by().unwrap(), b"\x00\xffbytes");
        assert_eq!(back.dt().unwrap().to_string(), "bfloat16");
        assert_eq!(back.dev().unwrap(), Device::new(2, 1));
        assert_eq!(back.note().unwrap(), "kept though compare-off", "every field is written");
        // The Array held by `a`, by `arr` and inside `m` is one node, read back as one Array.
        let arr = back.arr().unwrap();
        assert!(back.a().unwrap().to::<Array<i64>>().unwrap().ptr_eq(&arr));
        assert!(back.m().unwrap().get(&"xs".to_string()).unwrap().to::<Array<i64>>().unwrap().ptr_eq(&arr));
        // Written again, the same text.
        assert_eq!(to_json_graph(&back, None).unwrap(), text);
        // Inside containers, and as the testing types C defines.
        let d: Dict<String, Any> = vec![
            ("e".to_string(), Any::from(&e)),
            ("base".to_string(), Any::from(&create("testing.TestObjectBase", &[("v_str", Any::from("x"))]))),
            ("bytes".to_string(), Any::from(&Bytes::new(b"0123456789").unwrap())),
        ]
        .into();
        let back = from_json_graph(&to_json_graph(&d, None).unwrap()).unwrap();
        assert!(structural_eq(&back, &d).unwrap());
        assert_eq!(back.kind(), ffikit::Kind::Dict);
    });
}

#[test]
fn values_that_cannot_be_written_are_cs_errors() {
    no_leaks(|| {
        let cyc: List<Any> = List::new().unwrap();
        cyc.push(Any::from(1i64)).unwrap();
        cyc.push(Any::from(&cyc)).unwrap();
        let e = to_json_graph(&cyc, None).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Value);
        assert!(e.message().starts_with("Cycle detected during serialization"), "{}", e.message());
        cyc.clear().unwrap();
        let t = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let e = to_json_graph(&t, None).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Type, "{}", e);
        let f = testing("echo");
        let _: &Function = &f;
        assert_eq!(to_json_graph(&f, None).unwrap_err().error_kind(), ErrorKind::Type);
        let bad_meta: Map<String, Any> = vec![("f".to_string(), Any::from(&f))].into();
        assert_eq!(to_json_graph(1i64, Some(&bad_meta)).unwrap_err().error_kind(), ErrorKind::Type);
    });
}

#[test]
fn malformed_documents_are_value_errors_naming_the_problem() {
    no_leaks(|| {
        for doc in [
            "",
            "not json",
            "{\"root_index\":0,\"nodes\":[{\"type\":\"int\",\"data\":1}]",
            "[]",
            r#"{"nodes":[{"type":"int","data":1}]}"#,
            r#"{"root_index":"0","nodes":[{"type":"int","data":1}]}"#,
            r#"{"root_index":1,"nodes":[{"type":"int","data":1}]}"#,
            r#"{"root_index":-1,"nodes":[{"type":"int","data":1}]}"#,
            r#"{"root_index":0,"nodes":[{"data":1}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"int","data":"one"}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"ffi.Array","data":[0]}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"ffi.Array","data":[5]}]}"#,
            r#"{"root_index":1,"nodes":[{"type":"int","data":1},{"type":"ffi.Map","data":[0]}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"DataType","data":"float-ish"}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"ffi.Bytes","data":"not base64!"}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"no.such.Type","data":{}}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1,"b":2,"c":3}}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":1}}]}"#,
            r#"{"root_index":0,"nodes":[{"type":"testing.TestIntPair","data":{"a":"one","b":2}}]}"#,
        ] {
            let e = from_json_graph(doc).unwrap_err();
            assert_eq!(e.error_kind(), ErrorKind::Value, "{}: {}", doc, e);
            assert!(e.message().starts_with("Invalid JSON Object Graph"), "{}: {}", doc, e.message());
        }
        // A document whose text ends early inside a slice of a longer buffer: the length counts.
        let long = format!("{}trailing garbage", golden::PAIR);
        assert!(from_json_graph(&long).is_err());
        assert!(from_json_graph(&long[..golden::PAIR.len()]).is_ok());
    });
}

// ---- Properties ---------------------------------------------------------------------------

/// Random values over the whole range of each leaf kind: any i64, any finite f64, strings
/// with quotes, backslashes, newlines and non-ASCII text, bytes; containers and Nodes above.
fn value() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        Just(Tree::None),
        any::<i64>().prop_map(Tree::Int),
        any::<bool>().prop_map(Tree::Bool),
        any::<f64>().prop_filter("finite", |x| x.is_finite()).prop_map(Tree::Float),
        "[a-zA-Z0-9 \"\\\\é€\n]{0,12}".prop_map(Tree::Str),
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(Tree::Bytes),
    ];
    tree(leaf.boxed(), "[a-d]{1,3}")
}

fn node(v: i64, child: Any) -> Any {
    Any::from(&Node::new(v, child).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_value_reads_back_structurally_equal_and_writes_the_same_text(v in value()) {
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        setup();
        let v = v.build(&node);
        let text = to_json_graph(&v, None).unwrap();
        let back = from_json_graph(&text).unwrap();
        prop_assert!(structural_eq(&v, &back).unwrap(), "{} read back as {}", v, back);
        prop_assert_eq!(to_json_graph(&back, None).unwrap(), text);
    }

    #[test]
    fn truncated_documents_are_errors_never_crashes(v in value(), cut in 0usize..1000) {
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        setup();
        let v = v.build(&node);
        let text = to_json_graph(&v, None).unwrap();
        let mut at = cut.min(text.len().saturating_sub(1));
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let e = from_json_graph(&text[..at]).unwrap_err();
        prop_assert_eq!(e.error_kind(), ErrorKind::Value);
    }
}
