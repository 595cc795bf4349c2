//! Enums from Rust (C's ffikit/enum.h): define, add, look up by name and value, list,
//! attribute columns, identity, repr, the JSON graph, conversion into an enum field, and
//! the testing library's C-defined enums (libffikit_testing.so).
mod common;
use common::{testing, testing_module};
use ffikit::enums::{EnumKind, EnumMember, EnumType};
use ffikit::{from_json_graph, structural_eq, to_json_graph, Any, AnyView, Array, ErrorKind, Reflect, TypeInfo};

#[test]
fn define_add_and_look_up() {
    let t = EnumType::define("rusttest.enum.Color", EnumKind::Plain).unwrap();
    assert_eq!(EnumType::define("rusttest.enum.Color", EnumKind::Plain).unwrap(), t);
    assert_eq!(t.kind(), EnumKind::Plain);
    assert_eq!(t.key(), "rusttest.enum.Color");
    let red = t.add("RED", None).unwrap();
    let green = t.add("GREEN", None).unwrap();
    assert_eq!((red.name(), red.value()), ("RED".to_string(), 0));
    assert_eq!((green.name(), green.value()), ("GREEN".to_string(), 1));
    assert_eq!(t.get("GREEN").unwrap().unwrap(), green);
    assert_eq!(t.get_value(0).unwrap().unwrap(), red);
    assert!(t.get("PINK").unwrap().is_none());
    assert!(t.get_value(9).unwrap().is_none());
    assert_eq!(t.members().unwrap(), vec![red.clone(), green.clone()]);
    assert_eq!(t.len().unwrap(), 2);
    assert_eq!(red.enum_type(), t);
    assert_eq!(red.to_string(), "rusttest.enum.Color.RED");
    assert_eq!(EnumType::lookup("rusttest.enum.Color").unwrap(), Some(t));
    assert_eq!(EnumType::lookup("rusttest.enum.Nothing").unwrap(), None);

    let e = t.add("RED", None).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Value);
    assert!(e.message().contains("Duplicate enum index"), "{}", e.message());
    let e = t.add("BLUE", Some(5)).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
}

#[test]
fn int_and_str_enums() {
    let level = EnumType::define("rusttest.enum.Level", EnumKind::Int).unwrap();
    let low = level.add("LOW", Some(i64::MIN)).unwrap();
    assert_eq!(level.get_value(i64::MIN).unwrap().unwrap(), low);
    assert_eq!(level.add("NONE", None).unwrap_err().error_kind(), ErrorKind::Type);
    let op = EnumType::define("rusttest.enum.Op", EnumKind::Str).unwrap();
    let add = op.add("+", None).unwrap();
    assert_eq!(op.get("+").unwrap().unwrap(), add);
    assert_eq!(add.value(), 0);
}

#[test]
fn not_an_enum_type() {
    testing_module();
    let e = EnumType::lookup("testing.TestIntPair").unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert!(e.message().contains("is not an enum type"), "{}", e.message());
    assert_eq!(EnumType::from_index(99999).unwrap_err().error_kind(), ErrorKind::Value);
    let pair = TypeInfo::lookup("testing.TestIntPair").unwrap().unwrap();
    let p = pair.create(&[AnyView::from(1i64), AnyView::from(2i64)], &[]).unwrap();
    assert_eq!(EnumMember::from_object(p).unwrap_err().error_kind(), ErrorKind::Type);
}

#[test]
fn attribute_columns() {
    let t = EnumType::define("rusttest.enum.Attr", EnumKind::Plain).unwrap();
    let a = t.add("A", None).unwrap();
    let b = t.add("B", None).unwrap();
    assert!(t.attr("cost", &a).unwrap().is_none());
    t.set_attr("cost", &a, 7i64).unwrap();
    assert_eq!(t.attr("cost", &a).unwrap().unwrap().to::<i64>().unwrap(), 7);
    assert!(t.attr("cost", &b).unwrap().is_none());
    let other = EnumType::define("rusttest.enum.AttrOther", EnumKind::Plain).unwrap();
    let x = other.add("X", None).unwrap();
    assert_eq!(t.set_attr("cost", &x, 1i64).unwrap_err().error_kind(), ErrorKind::Type);
}

#[test]
fn the_testing_library_enum_is_shared_with_c() {
    testing_module();
    let variant = EnumType::lookup("testing.TestEnumVariant").unwrap().unwrap();
    let alpha = variant.get("Alpha").unwrap().unwrap();
    assert_eq!(alpha.value(), 0);
    assert_eq!(variant.attr("code", &alpha).unwrap().unwrap().to::<i64>().unwrap(), 10);
    let beta_name = Any::str("Beta").unwrap();
    let from_c = testing("enum_variant_get").call(&[AnyView::from(&beta_name)]).unwrap();
    let beta = EnumMember::from_object(from_c.to_object().unwrap()).unwrap();
    assert_eq!(variant.get("Beta").unwrap().unwrap(), beta);
    let gamma = Any::str("Gamma").unwrap();
    let e = testing("enum_variant_get").call(&[AnyView::from(&gamma)]).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Value);
}

#[test]
fn identity_json_graph_and_field_conversion() {
    testing_module();
    let t = EnumType::define("rusttest.enum.Json", EnumKind::Plain).unwrap();
    let red = t.add("RED", None).unwrap();
    let same = t.get("RED").unwrap().unwrap();
    assert!(structural_eq(&red.to_any(), &same.to_any()).unwrap());
    let arr: Array<Any> = vec![red.to_any(), red.to_any()].into_iter().collect();
    let text = to_json_graph(&arr, None).unwrap();
    assert_eq!(
        text,
        r#"{"root_index":1,"nodes":[{"type":"rusttest.enum.Json","data":"RED"},{"type":"ffi.Array","data":[0,0]}]}"#
    );
    let back = from_json_graph(&text).unwrap();
    let back: Array<Any> = back.to().unwrap();
    let first = EnumMember::from_object(back.get(0).unwrap().to_object().unwrap()).unwrap();
    assert_eq!(first, red);

    // An IntEnum field converts an int to its member, in C.
    let ints = EnumType::lookup("testing.TestCxxIntEnum").unwrap().unwrap();
    let strs = EnumType::lookup("testing.TestCxxStrEnum").unwrap().unwrap();
    let low = match ints.get_value(10).unwrap() {
        Some(m) => m,
        None => ints.add("low", Some(10)).unwrap(),
    };
    let add = match strs.get("+").unwrap() {
        Some(m) => m,
        None => strs.add("+", None).unwrap(),
    };
    let holder = TypeInfo::lookup("testing.TestCxxEnumHolder").unwrap().unwrap();
    let plus = Any::str("+").unwrap();
    let h = holder.create(&[AnyView::from(10i64), AnyView::from(&plus)], &[]).unwrap();
    let p = EnumMember::from_object(h.field::<Any>("priority").unwrap().to_object().unwrap()).unwrap();
    let o = EnumMember::from_object(h.field::<Any>("opcode").unwrap().to_object().unwrap()).unwrap();
    assert_eq!((p, o), (low, add));
    assert_eq!(h.set_field("priority", 11i64).unwrap_err().error_kind(), ErrorKind::Type);
}
