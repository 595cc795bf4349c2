//! Any/AnyView conversions with C's rules and texts, kinds, strings, dtype and device.
use ffikit::{Any, AnyView, Array, Bytes, DataType, Device, Kind, ObjectRef, Shape, Str};

#[test]
fn conversions_follow_the_c_accessors() {
    assert_eq!(i64::try_from(&Any::from(true)).unwrap(), 1);
    assert_eq!(f64::try_from(&Any::from(3i64)).unwrap(), 3.0);
    assert!(bool::try_from(&Any::from(2i64)).unwrap());
    let e = i64::try_from(&Any::from("x")).unwrap_err();
    assert_eq!((e.kind().as_str(), e.message().as_str()), ("TypeError", "expected int but got str"));
    let e = f64::try_from(&Any::from(DataType::of::<f32>())).unwrap_err();
    assert_eq!(e.to_string(), "TypeError: expected float but got dtype");
    // A str parses as a device or dtype, as C allows.
    assert_eq!(Any::from("cuda:1").to::<Device>().unwrap(), Device::new(2, 1));
    assert_eq!(Any::from("bfloat16").to::<DataType>().unwrap().to_string(), "bfloat16");
    assert_eq!(Any::from("gpu:0").to::<Device>().unwrap_err().kind(), "ValueError");
}

#[test]
fn kinds_match_for_every_value() {
    let long = "a string of more than seven bytes";
    let cases: Vec<(Any, Kind, &str)> = vec![
        (Any::none(), Kind::None, "None"),
        (Any::from(1i64), Kind::Int, "1"),
        (Any::from(false), Kind::Bool, "False"),
        (Any::from(0.1), Kind::Float, "0.1"),
        (Any::from("short"), Kind::Str, "\"short\""),
        (Any::from(long), Kind::Str, "\"a string of more than seven bytes\""),
        (Any::from(&b"\x00raw"[..]), Kind::Bytes, "b\"\\x00raw\""),
        (Any::from(Device::cpu()), Kind::Device, "cpu:0"),
        (Any::from(DataType::of::<i64>()), Kind::DataType, "int64"),
        (Any::from(&Shape::new(&[2, 3]).unwrap()), Kind::Shape, "Shape(2, 3)"),
        (Any::from(&Array::<i64>::from(vec![1, 2])), Kind::Array, "(1, 2)"),
    ];
    for (v, kind, repr) in cases {
        assert_eq!(v.kind(), kind, "{}", repr);
        assert_eq!(v.to_string(), repr);
        assert_eq!(format!("{:?}", v.clone()), repr);
        match v.kind() {
            Kind::Str => assert!(v.as_str().is_ok()),
            Kind::Bytes => assert!(v.as_bytes().is_ok()),
            _ => assert!(v.as_str().is_err()),
        }
    }
}

#[test]
fn small_and_object_strings_are_equal_values() {
    let small = Any::from("hello");
    let obj = Any::from_object(Str::new("hello").unwrap().into());
    assert_eq!(small.type_index(), ffikit::sys::ffk_type_index::FFK_TYPE_SMALL_STR.0 as i32);
    assert_eq!(small, obj);
    assert_eq!(small.as_str().unwrap(), obj.as_str().unwrap());
    assert_ne!(Any::from("1"), Any::from(&b"1"[..])); // str never equals bytes
    assert_ne!(Any::from(1i64), Any::from(true)); // 1, True, 1.0 are distinct
    assert_ne!(Any::from(1i64), Any::from(1.0));
}

#[test]
fn clone_retains_and_drop_releases() {
    let s = Str::new("shared string object").unwrap();
    let v = Any::from(&s);
    assert_eq!(s.use_count(), 2);
    let w = v.clone();
    assert_eq!(s.use_count(), 3);
    drop((v, w));
    assert_eq!(s.use_count(), 1);
    let view = AnyView::from(&s); // a view does not retain
    assert_eq!(s.use_count(), 1);
    let owned = view.to_any();
    assert_eq!(s.use_count(), 2);
    drop(owned);
}

#[test]
fn downcasts_are_checked() {
    let o: ObjectRef = Str::new("not an array at all").unwrap().into();
    let e = o.clone().downcast::<Array>().unwrap_err();
    assert_eq!(e.to_string(), "TypeError: expected Array but got str");
    let s: Str = o.downcast().unwrap();
    assert_eq!(&*s, "not an array at all");
    let b = Bytes::new(b"xyz").unwrap();
    assert_eq!(Any::from(&b).as_bytes().unwrap(), b"xyz");
    // An untyped Array with a str inside does not pass as Array<i64>.
    let a: Array = vec![Any::from(1i64), Any::from("x")].into();
    let e = ObjectRef::from(a).downcast::<Array<i64>>().unwrap_err();
    assert_eq!(e.to_string(), "TypeError: Array item #1: expected int but got str");
}

#[test]
fn cstr_views_borrow_without_copying() {
    let text = std::ffi::CString::new("a view of a C string").unwrap();
    let v = AnyView::from_cstr(&text);
    assert_eq!(v.kind(), Kind::Str);
    assert_eq!(v.as_str().unwrap(), "a view of a C string");
    let owned = v.to_any(); // a copy into a String object
    drop(text);
    assert_eq!(owned.as_str().unwrap(), "a view of a C string");
}

#[test]
fn dtype_and_device_print_and_parse() {
    assert_eq!(DataType::of::<f32>().to_string(), "float32");
    assert_eq!(DataType::of::<u8>().itemsize(), 1);
    assert_eq!("x".parse::<DataType>().unwrap_err().kind(), "ValueError");
    let d = Device::new(18, 3); // DLPack 1.1 device codes pass through as integers
    assert_eq!(d.device_type(), 18);
    assert_eq!(Any::from(d).to::<Device>().unwrap(), d);
}
