//! Functions from closures (packed and typed), errors across the boundary, the registry,
//! modules, and the testing.* globals of libffikit_testing.so.
mod common;
use common::{testing, testing_module};
use ffikit::{Any, AnyView, Array, Bytes, DataType, Device, Dict, Error, Function, List, Map, Module, ObjectRef, Str};

#[test]
fn packed_closure_called_from_rust_and_through_c() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let f = Function::from_packed("rs.count", move |args: &[AnyView]| {
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Any::from(args.len() as i64))
    })
    .unwrap();
    assert_eq!(f.name(), "rs.count");
    assert_eq!(f.signature(), None);
    assert_eq!(f.call(&[]).unwrap().to::<i64>().unwrap(), 0);
    // testing.apply (C) calls the Rust closure with the rest of its arguments.
    let r = testing("apply").call(&[AnyView::from(&f), AnyView::from(1i64), AnyView::from(2.0)]).unwrap();
    assert_eq!(r.to::<i64>().unwrap(), 2);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 2);
}

#[test]
fn quick_flag_is_set_before_sharing_and_seen_through_the_registry() {
    let f = Function::from_typed("rs.quick", |(x,): (i64,)| Ok(x + 1)).unwrap();
    assert_eq!(f.flags(), 0);
    f.set_flags(Function::QUICK).unwrap();
    assert_eq!(f.flags(), Function::QUICK);
    assert_eq!(f.call_typed::<_, i64>((1i64,)).unwrap(), 2);
    let e = f.set_flags(0x80).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    assert_eq!(e.message(), "cannot set the flags of Function `rs.quick`: unknown flag bits 0x80");
    f.register_global("rs.quick", true).unwrap();
    let e = f.set_flags(0).unwrap_err(); // the registry holds it now
    assert!(e.message().contains("it is shared"), "{}", e.message());
    let g = Function::get_global("rs.quick").unwrap().unwrap();
    assert_eq!(g.flags(), Function::QUICK);
    assert!(Function::remove_global("rs.quick").unwrap());
    assert_eq!(testing("nop").flags(), Function::QUICK); // set by testing.c
    assert_eq!(testing("echo").flags(), 0);
}

#[test]
fn rust_error_crosses_c_and_comes_back_as_the_same_error() {
    let err = Error::new("mylib.Custom", "raised in Rust");
    let e2 = err.clone();
    let f = Function::from_packed("rs.fail", move |_| Err(e2.clone())).unwrap();
    let back = testing("apply").call(&[AnyView::from(&f)]).unwrap_err();
    assert!(back.is(&err), "the very Error object");
    assert_eq!((back.kind().as_str(), back.message().as_str()), ("mylib.Custom", "raised in Rust"));
    let bt = back.backtrace();
    assert!(bt.contains("in call to Function `rs.fail`"), "{}", bt);
    assert!(bt.contains("in call to Function `testing.apply`"), "{}", bt);
}

#[test]
fn c_error_nested_through_a_rust_callback_keeps_kind_message_and_frames() {
    // Rust -> testing.apply (C) -> Rust closure -> testing.raise_error (C)
    let raise = testing("raise_error");
    let f = Function::from_packed("rs.relay", move |args: &[AnyView]| raise.call(args)).unwrap();
    let e = testing("apply")
        .call(&[AnyView::from(&f), AnyView::from(&Any::from("KeyError")), AnyView::from(&Any::from("deep inside"))])
        .unwrap_err();
    assert_eq!(e.to_string(), "KeyError: deep inside");
    let bt = e.backtrace();
    for frame in ["ffk_testing_raise_error", "`testing.raise_error`", "`rs.relay`", "`testing.apply`"] {
        assert!(bt.contains(frame), "{} not in\n{}", frame, bt);
    }
}

#[test]
fn a_panic_becomes_a_runtime_error() {
    let f = Function::from_packed("rs.panics", |_| panic!("boom")).unwrap();
    let e = f.call(&[]).unwrap_err();
    assert_eq!(e.to_string(), "RuntimeError: Rust function `rs.panics` panicked: boom");
}

#[test]
fn typed_closure_gets_cs_checks_and_messages() {
    let f = Function::from_typed("rs.scale", |(xs, k): (Array<f64>, f64)| Ok(xs.iter().map(|x| x * k).collect::<Array<f64>>())).unwrap();
    assert_eq!(f.signature().unwrap(), "rs.scale(0: Array<float>, 1: float) -> Array<float>");
    // C converts a List of ints into an Array<float> before the closure runs.
    let l: List = vec![Any::from(1i64), Any::from(2i64)].into();
    let r = f.call(&[AnyView::from(&l), AnyView::from(10i64)]).unwrap();
    assert_eq!(r.to_string(), "(10.0, 20.0)");
    let e = f.call(&[AnyView::from(&Any::from("1, 2")), AnyView::from(1.0)]).unwrap_err();
    assert_eq!(
        e.message(),
        "Mismatched type on argument #0 when calling: `rs.scale(0: Array<float>, 1: float) -> Array<float>`. Expected `Array<float>` but got `str`"
    );
    assert_eq!(f.call_typed::<_, Array<f64>>((Array::<f64>::from(vec![0.5]), 2.0)).unwrap().to_vec(), vec![1.0]);
}

#[test]
fn global_registry_round_trip() {
    let f = Function::from_typed("rs.registry_twice", |(x,): (i64,)| Ok(x * 2)).unwrap();
    f.register_global("rs.registry_twice", false).unwrap();
    let e = f.register_global("rs.registry_twice", false).unwrap_err();
    assert_eq!(e.to_string(), "RuntimeError: Global Function `rs.registry_twice` is already registered");
    f.register_global("rs.registry_twice", true).unwrap();
    assert!(Function::list_global_names().unwrap().iter().any(|n| n == "rs.registry_twice"));
    // C finds the Rust function by name: testing.apply with a Function argument.
    let g = Function::get_global("rs.registry_twice").unwrap().unwrap();
    assert_eq!(testing("apply").call(&[AnyView::from(&g), AnyView::from(21i64)]).unwrap().to::<i64>().unwrap(), 42);
    assert!(Function::remove_global("rs.registry_twice").unwrap());
    assert!(!Function::remove_global("rs.registry_twice").unwrap());
    assert!(Function::get_global("rs.registry_twice").unwrap().is_none());
}

#[test]
fn echo_round_trips_every_kind() {
    let echo = testing("echo");
    let values: Vec<Any> = vec![
        Any::none(),
        Any::from(-3i64),
        Any::from(true),
        Any::from(2.5),
        Any::from("small"),
        Any::from("a string that lives in an object"),
        Any::from(&b"raw\x00"[..]),
        Any::from(Device::new(2, 1)),
        Any::from(DataType::of::<f32>()),
        Any::from(&Str::new("obj").unwrap()),
        Any::from(&Bytes::new(b"bytes object").unwrap()),
        Any::from(&Array::<i64>::from(vec![1, 2])),
        Any::from(&Map::<String, i64>::from(vec![("k".to_string(), 1)])),
        Any::from(&List::<i64>::from(vec![3])),
        Any::from(&Dict::<i64, i64>::from(vec![(1, 2)])),
        Any::from(&echo),
    ];
    for v in values {
        let r = echo.call(&[v.view()]).unwrap();
        assert_eq!(r, v, "{}", v);
        assert_eq!(r.kind(), v.kind());
        if let Ok(o) = v.to_object() {
            assert!(r.to_object().unwrap().ptr_eq(&o), "objects come back as themselves");
        }
    }
}

#[test]
fn schema_identities_convert_like_c() {
    let cases: Vec<(&str, Any, &str)> = vec![
        ("int", Any::from(true), "1"),
        ("float", Any::from(2i64), "2.0"),
        ("bool", Any::from(0i64), "False"),
        ("device", Any::from("cuda:1"), "cuda:1"),
        ("dtype", Any::from("float16"), "float16"),
        ("string", Any::from("s"), "\"s\""),
        ("bytes", Any::from(&b"b"[..]), "b\"b\""),
        ("any", Any::from(1.5), "1.5"),
        ("arr_int", Any::from(&List::<Any>::from(vec![Any::from(1i64), Any::from(true)])), "(1, 1)"),
        ("list_int", Any::from(&List::<i64>::from(vec![1])), "[1]"),
        ("map_str_int", Any::from(&Map::<String, i64>::from(vec![("a".to_string(), 1)])), "{\"a\": 1}"),
        ("dict_str_int", Any::from(&Dict::<String, i64>::from(vec![("a".to_string(), 1)])), "{\"a\": 1}"),
    ];
    for (name, arg, want) in cases {
        let r = testing(&format!("schema_id_{}", name)).call(&[arg.view()]).unwrap();
        assert_eq!(r.to_string(), want, "schema_id_{}", name);
    }
    let e = testing("schema_id_arr_str").call(&[Any::from(&Array::<i64>::from(vec![1])).view()]).unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert!(e.message().contains("Expected `Array<str>`"), "{}", e.message());
    // Typed results from Rust: the identity on Array<int> comes back as an Array<i64>.
    let back: Array<i64> = testing("schema_id_arr_int").call_typed((Array::<i64>::from(vec![4, 5]),)).unwrap();
    assert_eq!(back.to_vec(), vec![4, 5]);
}

#[test]
fn object_use_count_seen_by_c() {
    let a: Array<i64> = vec![1].into();
    let n: i64 = testing("object_use_count").call_typed((a.clone(),)).unwrap();
    assert!(n >= 2, "the caller's handle and the argument's: {}", n);
}

#[test]
fn module_load_and_missing_function() {
    let m = testing_module();
    assert!(m.path().ends_with("libffikit_testing.so"));
    let add_one = m.get_function("add_one").unwrap();
    assert_eq!(add_one.signature().unwrap(), "add_one(0: int) -> int");
    assert_eq!(add_one.call_typed::<_, i64>((41i64,)).unwrap(), 42);
    let e = m.get_function("missing").unwrap_err();
    assert_eq!(e.kind(), "AttributeError");
    let e = Module::load("/nonexistent/libnothing.so").unwrap_err();
    assert!(e.message().starts_with("cannot load module `/nonexistent/libnothing.so`"), "{}", e);
    let o: ObjectRef = m.clone().into();
    assert_eq!(o.type_name(), "Module");
}

#[test]
fn typed_closure_returning_nothing_declares_none() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let f = Function::from_typed("rs.record", move |(x,): (String,)| {
        s.lock().unwrap().push(x);
        Ok(())
    })
    .unwrap();
    assert_eq!(f.signature().unwrap(), "rs.record(0: str) -> None");
    f.call_typed::<_, ()>(("a".to_string(),)).unwrap();
    assert!(testing("apply").call(&[AnyView::from(&f), Any::from("b").view()]).unwrap().is_none());
    assert_eq!(*seen.lock().unwrap(), vec!["a".to_string(), "b".to_string()]);
}

#[test]
fn typed_functions_take_and_return_short_strings_and_bytes() {
    let join = Function::from_typed("rs.join", |(xs, sep): (Array<ffikit::Str>, ffikit::Str)| {
        Ok(xs.iter().map(|s| s.as_str().to_string()).collect::<Vec<_>>().join(sep.as_str()))
    })
    .unwrap();
    let words: Array = vec![Any::from("ab"), Any::from("a longer word"), Any::from("")].into();
    let r = join.call(&[AnyView::from(&words), AnyView::from(&Any::from("-"))]).unwrap();
    assert_eq!(r.as_str().unwrap(), "ab-a longer word-");
    let first = Function::from_typed("rs.first", |(xs,): (List<ffikit::Str>,)| xs.get(0)).unwrap();
    let l: List = vec![Any::from("tiny")].into();
    let r = first.call(&[AnyView::from(&l)]).unwrap();
    assert_eq!(r.as_str().unwrap(), "tiny");
    assert_eq!(first.call_typed::<_, ffikit::Str>((List::<ffikit::Str>::from(vec![ffikit::Str::new("x").unwrap()]),)).unwrap().as_str(), "x");
    let len = Function::from_typed("rs.len", |(b,): (ffikit::Bytes,)| Ok(b.as_bytes().len() as i64)).unwrap();
    assert_eq!(len.call(&[AnyView::from(&Any::from(&b"\x01\x02"[..]))]).unwrap().to::<i64>().unwrap(), 2);
    // Through C and back: testing.echo returns the inline value, read as Str.
    let echo = common::testing("echo");
    assert_eq!(echo.call_typed::<_, ffikit::Str>((Any::from("echo"),)).unwrap().as_str(), "echo");
}

// ---- keyword calls (ffk_function_call_kw: C binds the names) ----

fn scale() -> Function {
    testing_module().get_function("scale").unwrap()
}

fn floats(a: &Any) -> Vec<f64> {
    a.to::<Array<f64>>().unwrap().to_vec()
}

#[test]
fn keyword_call_binds_by_parameter_name() {
    let f = scale();
    assert_eq!(f.param_names(), Some(vec![Some("xs".to_string()), Some("k".to_string())]));
    let xs = List::<i64>::from(vec![1, 2]); // a List of ints: converted to Array<float>
    let r = f.call_kw(&[AnyView::from(&xs)], &[("k", AnyView::from(3i64))]).unwrap();
    assert_eq!(floats(&r), vec![3.0, 6.0]);
    let r = f.call_kw(&[], &[("k", AnyView::from(0.5)), ("xs", AnyView::from(&xs))]).unwrap();
    assert_eq!(floats(&r), vec![0.5, 1.0]);
    // No keywords: the positional call.
    let r = f.call_kw(&[AnyView::from(&xs), AnyView::from(2.0)], &[]).unwrap();
    assert_eq!(floats(&r), vec![2.0, 4.0]);
}

#[test]
fn keyword_call_errors_are_cs_texts() {
    let f = scale();
    let xs = List::<i64>::from(vec![1]);
    let x = AnyView::from(&xs);
    let cases: Vec<(Vec<AnyView>, Vec<(&str, AnyView)>, &str)> = vec![
        (vec![x], vec![("q", AnyView::from(1i64))], "TypeError: scale() got an unexpected keyword argument 'q'"),
        (vec![x], vec![("xs", x)], "TypeError: scale() got multiple values for argument 'xs'"),
        (vec![], vec![("xs", x)], "TypeError: scale() missing 1 required positional argument: 'k'"),
        (vec![], vec![("k", AnyView::from(1i64))], "TypeError: scale() missing 1 required positional argument: 'xs'"),
    ];
    for (args, kwargs, want) in cases {
        assert_eq!(f.call_kw(&args, &kwargs).unwrap_err().to_string(), want);
    }
    let bad = Any::from("x");
    let e = f.call_kw(&[x], &[("k", AnyView::from(&bad))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "TypeError: Mismatched type on argument #1 when calling: `scale(xs: Array<float>, k: float) -> Array<float>`. \
         Expected `float` but got `str`"
    );
    let e = f.call_kw(&[x], &[("k\0", AnyView::from(1i64))]).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: string has a NUL byte at offset 1");
}

#[test]
fn untyped_and_unnamed_functions_take_no_keywords() {
    let packed = Function::from_packed("rs.packed", |args: &[AnyView]| Ok(Any::from(args.len() as i64))).unwrap();
    assert_eq!(packed.param_names(), None);
    let e = packed.call_kw(&[], &[("x", AnyView::from(1i64))]).unwrap_err();
    assert_eq!(e.to_string(), "TypeError: rs.packed() takes no keyword arguments");
    let typed = Function::from_typed("rs.typed", |(a, b): (i64, i64)| Ok(a + b)).unwrap();
    assert_eq!(typed.param_names(), Some(vec![None, None]));
    let e = typed.call_kw(&[AnyView::from(1i64)], &[("b", AnyView::from(2i64))]).unwrap_err();
    assert_eq!(e.to_string(), "TypeError: rs.typed() takes no keyword arguments");
    let e = testing("add_one").call_kw(&[], &[("x", AnyView::from(1i64))]).unwrap_err();
    assert_eq!(e.to_string(), "TypeError: testing.add_one() takes no keyword arguments");
}

#[test]
fn global_name_is_by_identity_own_name_first() {
    let f = Function::from_typed("rs.gname", |(x,): (i64,)| Ok(x)).unwrap();
    assert_eq!(f.global_name().unwrap(), None, "not registered");
    f.register_global("rs.gname.z", false).unwrap();
    f.register_global("rs.gname.a", false).unwrap();
    assert_eq!(f.global_name().unwrap().as_deref(), Some("rs.gname.a"), "first name in name order");
    f.register_global("rs.gname", false).unwrap();
    assert_eq!(f.global_name().unwrap().as_deref(), Some("rs.gname"), "its own name wins");
    // A Function made the same way but not registered has none.
    let g = Function::from_typed("rs.gname", |(x,): (i64,)| Ok(x)).unwrap();
    assert_eq!(g.global_name().unwrap(), None);
    // Replaced under its own name: the other names remain.
    g.register_global("rs.gname", true).unwrap();
    assert_eq!(f.global_name().unwrap().as_deref(), Some("rs.gname.a"));
    assert_eq!(g.global_name().unwrap().as_deref(), Some("rs.gname"));
    for n in ["rs.gname", "rs.gname.a", "rs.gname.z"] {
        assert!(Function::remove_global(n).unwrap());
    }
    assert_eq!(f.global_name().unwrap(), None);
    // A C global found by name.
    assert_eq!(testing("echo").global_name().unwrap().as_deref(), Some("testing.echo"));
}
