//! "Equal values hash alike" (ffikit/structural.h, issue 35) as proptest properties: values
//! of every kind (None, bool, int, float with -0.0 and NaN, str, bytes, Shape, Array, List,
//! Map, Dict, reflected objects with a field of every storage: int, float, bool, str,
//! Object and Any, holding Shapes among others, plus a compare-off field) nested in every
//! position, built twice from one description (distinct objects, varying what equality
//! ignores), must be structurally equal with equal structural hashes (and equal under
//! `Any`'s `PartialEq` and `Hash`); and any two values found equal must hash alike.
use ffikit::{structural_eq, structural_hash, Any, Array, Dict, List, Map, ObjectRef, ObjectType, Shape};
use proptest::prelude::*;

ffikit::reflected_type! {
    /// A field of every storage; `obj` and `any` hold Shapes in the case.
    #[type_key = "rstest.structural_hash.Holder", layout = HolderLayout]
    pub struct Holder {
        i: i64,
        f: f64,
        b: bool,
        s: String,
        obj: ObjectRef,
        any: Any,
        #[flags(COMPARE_OFF)]
        note: String = "".to_string(),
    }
}

#[derive(Clone, Debug)]
enum V {
    None,
    Int(i64),
    Bool(bool),
    /// 0: 0.0 (or -0.0), 1: NaN (either sign), 2: 1.5
    Float(u8),
    Str(String),
    Bytes(Vec<u8>),
    Shape(Vec<i64>),
    Array(Vec<V>),
    List(Vec<V>),
    Map(Vec<(String, V)>),
    Dict(Vec<(String, V)>),
    /// i, f, b, s, obj (a Shape's dims, or an Array of values), any
    Holder(i64, u8, bool, String, Result<Vec<i64>, Vec<V>>, Box<V>),
}

fn float(code: u8, variant: bool) -> f64 {
    match code {
        0 => if variant { -0.0 } else { 0.0 },
        1 => if variant { -f64::NAN } else { f64::NAN },
        _ => 1.5,
    }
}

impl V {
    /// A fresh ffikit value; `variant` picks among the forms equality ignores.
    fn build(&self, variant: bool) -> Any {
        let all = |items: &[V]| items.iter().map(|v| v.build(variant)).collect::<Vec<Any>>();
        let pairs = |kv: &[(String, V)]| kv.iter().map(|(k, v)| (k.clone(), v.build(variant))).collect::<Vec<_>>();
        match self {
            V::None => Any::none(),
            V::Int(x) => Any::from(*x),
            V::Bool(x) => Any::from(*x),
            V::Float(c) => Any::from(float(*c, variant)),
            V::Str(s) => Any::from(s.as_str()),
            V::Bytes(b) => Any::from(&b[..]),
            V::Shape(d) => Any::from(&Shape::new(d).unwrap()),
            V::Array(items) => Any::from(&Array::<Any>::from(all(items))),
            V::List(items) => Any::from(&List::<Any>::from(all(items))),
            V::Map(kv) => Any::from(&Map::<String, Any>::from(pairs(kv))),
            V::Dict(kv) => Any::from(&Dict::<String, Any>::from(pairs(kv))),
            V::Holder(i, f, b, s, obj, any) => {
                let obj = match obj {
                    Ok(dims) => Shape::new(dims).unwrap().into_object(),
                    Err(items) => Array::<Any>::from(all(items)).into_object(),
                };
                let note = if variant { "one note" } else { "another" };
                Any::from(&Holder::new(*i, float(*f, variant), *b, s.clone(), obj, any.build(variant), note.into()).unwrap())
            }
        }
    }
}

fn dims() -> impl Strategy<Value = Vec<i64>> {
    proptest::collection::vec(0i64..3, 0..3)
}

fn value() -> impl Strategy<Value = V> {
    let leaf = prop_oneof![
        Just(V::None),
        (-2i64..2).prop_map(V::Int),
        any::<bool>().prop_map(V::Bool),
        (0u8..3).prop_map(V::Float),
        prop_oneof![Just("a".to_string()), Just("a string longer than seven".to_string())].prop_map(V::Str),
        prop_oneof![Just(b"b".to_vec()), Just(b"bytes longer than seven".to_vec())].prop_map(V::Bytes),
        dims().prop_map(V::Shape),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(V::Array),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(V::List),
            proptest::collection::vec(("[a-b]", inner.clone()), 0..3).prop_map(V::Map),
            proptest::collection::vec(("[a-b]", inner.clone()), 0..3).prop_map(V::Dict),
            (
                0i64..2,
                0u8..3,
                any::<bool>(),
                prop_oneof![Just("x".to_string()), Just("a longer string field".to_string())],
                prop_oneof![dims().prop_map(Ok), proptest::collection::vec(inner.clone(), 0..2).prop_map(Err)],
                inner
            )
                .prop_map(|(i, f, b, s, obj, any)| V::Holder(i, f, b, s, obj, Box::new(any))),
        ]
    })
}

fn std_hash(v: &Any) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn two_builds_of_one_value_are_equal_and_hash_alike(v in value()) {
        let (a, b) = (v.build(false), v.build(true));
        prop_assert!(structural_eq(&a, &b).unwrap());
        prop_assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        // Any's PartialEq and Hash (what a HashMap<Any, _> uses) agree too.
        prop_assert!(a == b);
        prop_assert_eq!(std_hash(&a), std_hash(&b));
    }

    #[test]
    fn structurally_equal_values_hash_alike(x in value(), y in value()) {
        let (a, b) = (x.build(false), y.build(true));
        if structural_eq(&a, &b).unwrap() {
            prop_assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
        }
    }
}

/// The case of issue 35: two equal objects, each holding its own Shape((2, 3)) directly in a field.
#[test]
fn a_shape_in_a_field_hashes_by_its_dimensions() {
    let make = || {
        let shape = Shape::new(&[2, 3]).unwrap();
        Any::from(
            &Holder::new(1, 0.5, true, "s".into(), shape.clone().into_object(), Any::from(&shape), "".into()).unwrap(),
        )
    };
    let (a, b) = (make(), make());
    assert!(structural_eq(&a, &b).unwrap());
    assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
}
