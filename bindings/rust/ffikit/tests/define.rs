//! `reflected_type!` with a parent type and `Option` fields: a parent/child/grandchild chain
//! defined in Rust, made from Rust, read through every handle, seen from C through the raw
//! API and by C's type checks; Optional fields set to None and Some, and refused values.
use ffikit::sys;
use ffikit::{Any, AnyView, Array, ErrorKind, ObjectRef, ObjectType, Reflect, Result, TypeInfo};
use std::ffi::CStr;

ffikit::reflected_type! {
    /// A base type defined in Rust.
    #[type_key = "rsdef.Shape", layout = ShapeLayout]
    pub struct Shape {
        /// A required id.
        #[writable(set_id)]
        id: i64,
        /// A name with a default.
        name: String = "shape".to_string(),
    }
    methods {
        /// "name#id".
        fn describe(this: Shape) -> Result<String> {
            Ok(format!("{}#{}", this.name()?, this.id()))
        }
    }
}

ffikit::reflected_type! {
    /// A child of Shape.
    #[type_key = "rsdef.Circle", layout = CircleLayout, parent = Shape]
    pub struct Circle {
        #[writable(set_radius)]
        radius: f64 = 1.0,
        /// Another shape, or None.
        #[writable(set_center)]
        center: Option<Shape> = None,
        /// A required optional string (None must be passed explicitly).
        #[writable(set_tag)]
        tag: Option<String>,
        /// An optional int: `ffk_any` storage.
        #[writable(set_count)]
        count: Option<i64> = None,
    }
    methods {
        /// The area.
        fn area(this: Circle) -> Result<f64> {
            Ok(std::f64::consts::PI * this.radius() * this.radius())
        }
    }
}

ffikit::reflected_type! {
    /// A grandchild: Shape -> Circle -> Ring.
    #[type_key = "rsdef.Ring", layout = RingLayout, parent = Circle,]
    pub struct Ring {
        inner: f64 = 0.5,
    }
}

fn circle(id: i64, tag: Option<&str>) -> Circle {
    let tag = tag.map_or_else(Any::none, Any::from);
    Circle::create(&[AnyView::from(id), tag.view()], &[]).unwrap()
}

fn takes_shape(s: &Shape) -> i64 {
    s.id()
}

#[test]
fn child_type_registers_with_its_parent_and_inherited_fields_first() {
    let (shape, circ, ring) = (Shape::type_info().unwrap(), Circle::type_info().unwrap(), Ring::type_info().unwrap());
    assert_eq!(circ.parent(), Some(shape));
    assert_eq!(ring.parent(), Some(circ));
    assert_eq!(shape.parent().map(|p| p.key()), Some("ffikit.Object"));
    assert!(ring.is_subtype_of(shape) && circ.is_subtype_of(shape) && !shape.is_subtype_of(circ));
    let names: Vec<&str> = circ.fields().unwrap().iter().map(|f| f.name()).collect();
    assert_eq!(names, ["id", "name", "radius", "center", "tag", "count"]);
    let names: Vec<&str> = ring.fields().unwrap().iter().map(|f| f.name()).collect();
    assert_eq!(names, ["id", "name", "radius", "center", "tag", "count", "inner"]);
    let types: Vec<&str> = circ.fields().unwrap().iter().map(|f| f.type_text()).collect();
    assert_eq!(types, ["int", "str", "float", "Optional<rsdef.Shape>", "Optional<str>", "Optional<int>"]);
    // The layouts nest: the parent's first, the child's fields after it.
    assert_eq!(std::mem::offset_of!(CircleLayout, header), 0);
    assert!(std::mem::offset_of!(CircleLayout, radius) >= std::mem::size_of::<ShapeLayout>());
    assert_eq!(circ.field("radius").unwrap().offset(), std::mem::offset_of!(CircleLayout, radius));
    assert_eq!(circ.field("id").unwrap().offset(), std::mem::offset_of!(ShapeLayout, id));
    assert_eq!(ring.instance_size(), std::mem::size_of::<RingLayout>());
    // The methods: the parent's are inherited.
    let c = circle(3, Some("t"));
    assert_eq!(c.call_method("describe", &[]).unwrap().to::<String>().unwrap(), "shape#3");
    assert!((c.call_method("area", &[]).unwrap().to::<f64>().unwrap() - std::f64::consts::PI).abs() < 1e-12);
}

#[test]
fn child_made_from_rust_reads_through_child_and_parent_handles() {
    // Positional: required fields first (id, tag), then defaulted ones, each in field order.
    let c = Circle::create(&[AnyView::from(7i64), Any::from("t").view(), Any::from("c").view(), AnyView::from(2.0)], &[]).unwrap();
    assert_eq!((c.id(), c.name().unwrap(), c.radius(), c.tag().unwrap()), (7, "c".to_string(), 2.0, Some("t".to_string())));
    assert_eq!((c.center().unwrap(), c.count().unwrap()), (None, None));
    // The parent's getters and setters through Deref; a &Circle where a &Shape is expected.
    c.set_id(8).unwrap();
    assert_eq!(takes_shape(&c), 8);
    let as_shape: &Shape = c.as_ref();
    assert_eq!(as_shape.describe_text(), "c#8");
    // Upcast by value: the same object.
    let s: Shape = c.clone().into();
    assert!(s.as_object().ptr_eq(c.as_object()));
    assert_eq!((s.id(), s.name().unwrap()), (8, "c".to_string()));
    assert_eq!(s.field::<f64>("radius").unwrap(), 2.0, "the child's fields by name on the parent handle");
    // Downcast, checked with the type registry.
    let back = Circle::try_from(s).unwrap();
    assert_eq!(back.radius(), 2.0);
    let plain = Shape::new(1, "plain".into()).unwrap();
    let e = Circle::try_from(plain.clone()).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert!(e.message().contains("rsdef.Circle"), "{}", e.message());
    assert!(plain.as_object().clone().downcast::<Ring>().is_err());
    // A grandchild reads through both ancestors.
    let r = Ring::create(&[AnyView::from(5i64), Any::none().view()], &[("inner", AnyView::from(0.25))]).unwrap();
    assert_eq!((r.id(), r.radius(), r.inner(), r.tag().unwrap()), (5, 1.0, 0.25, None));
    assert_eq!(takes_shape(&r), 5);
    let rs: Shape = Circle::from(r.clone()).into();
    assert!(Ring::try_from(Circle::try_from(rs).unwrap()).is_ok());
    assert!(r.as_object().clone().downcast::<Shape>().is_ok());
    // Every field in order, through C's ffk_object_field_values.
    let values = c.field_values().unwrap();
    assert_eq!(values.len(), 6);
    assert_eq!((values[0].to::<i64>().unwrap(), values[2].to::<f64>().unwrap()), (8, 2.0));
    assert!(values[3].is_none() && values[5].is_none());
    // new() names the type's own fields; inherited ones take their defaults, so a required
    // inherited field makes it C's error (use create).
    let e = Circle::new(1.0, None, None, None).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert!(e.message().contains("`id`"), "{}", e.message());
}

trait DescribeText {
    fn describe_text(&self) -> String;
}
impl DescribeText for Shape {
    fn describe_text(&self) -> String {
        self.call_method("describe", &[]).unwrap().to::<String>().unwrap()
    }
}

#[test]
fn child_seen_from_c_by_field_reads_and_type_checks() {
    let c = circle(11, None);
    c.set_radius(4.5).unwrap();
    let (shape, circ) = (Shape::type_index().unwrap(), Circle::type_index().unwrap());
    let obj = c.as_object().as_ptr();
    // SAFETY: a live object held by c; out values released after use.
    unsafe {
        assert_eq!((*obj).type_index, circ);
        assert!(sys::ffk_type_is_instance(circ, shape));
        assert!(!sys::ffk_type_is_instance(shape, circ));
        assert!(sys::ffk_type_is_instance(Ring::type_index().unwrap(), shape));
        let mut out = sys::ffk_any_none();
        assert_eq!(sys::ffk_object_get_field(obj, c"id".as_ptr(), &mut out), 0);
        assert_eq!(out.__bindgen_anon_1.v_int, 11);
        assert_eq!(sys::ffk_object_get_field(obj, c"radius".as_ptr(), &mut out), 0);
        assert_eq!(out.__bindgen_anon_1.v_float, 4.5);
        assert_eq!(sys::ffk_object_get_field(obj, c"tag".as_ptr(), &mut out), 0);
        assert_eq!(out.type_index, sys::ffk_type_index::FFK_TYPE_NONE.0 as i32);
        // C writes the inherited field, both Rust handles read it at its offset.
        let v = sys::ffk_any_int(-3);
        assert_eq!(sys::ffk_object_set_field(obj, c"id".as_ptr(), &v), 0);
        // C's text for an unknown field names the child type.
        assert_eq!(sys::ffk_object_get_field(obj, c"nope".as_ptr(), &mut out), -1);
        let err = sys::ffk_error_fetch();
        assert_eq!(CStr::from_ptr(sys::ffk_error_message(err)).to_str().unwrap(), "`rsdef.Circle` object has no field `nope`");
        sys::ffk_object_release(err.cast());
    }
    assert_eq!(c.id(), -3);
    let s: &Shape = &c;
    assert_eq!(s.id(), -3);
    // A C-side instance check through the parent's TypeInfo.
    assert!(TypeInfo::of(c.as_object().type_index()).unwrap().is_subtype_of(Shape::type_info().unwrap()));
}

#[test]
fn option_fields_hold_none_or_some_and_refuse_other_types() {
    let c = circle(1, Some("a"));
    assert_eq!(c.tag().unwrap().as_deref(), Some("a"));
    c.set_tag(None).unwrap();
    assert_eq!(c.tag().unwrap(), None);
    c.set_tag(Some("b".into())).unwrap();
    assert_eq!(c.tag().unwrap().as_deref(), Some("b"));
    // An object-valued Optional: None, an instance, a subtype's instance.
    let other = Shape::new(2, "other".into()).unwrap();
    c.set_center(Some(other.clone())).unwrap();
    assert!(c.center().unwrap().unwrap().as_object().ptr_eq(other.as_object()));
    let sub = circle(3, None);
    c.set_field("center", sub.clone()).unwrap();
    let got = c.center().unwrap().unwrap();
    assert!(got.as_object().ptr_eq(sub.as_object()) && Circle::try_from(got).is_ok());
    c.set_center(None).unwrap();
    assert!(c.center().unwrap().is_none());
    // Seen from C: an Optional object slot holding None reads as None.
    assert!(c.field_any("center").unwrap().is_none());
    let out = c.field_any("tag").unwrap();
    assert_eq!(out.to::<Option<String>>().unwrap().as_deref(), Some("b"));
    // Optional<int> (ffk_any storage).
    c.set_count(Some(4)).unwrap();
    assert_eq!(c.count().unwrap(), Some(4));
    c.set_count(None).unwrap();
    assert_eq!(c.count().unwrap(), None);
    // Values of the wrong type: C's TypeError naming the field, the field unchanged.
    for (field, bad) in [("center", Any::from(5i64)), ("center", Any::from(&Array::<i64>::from(vec![1]))), ("tag", Any::from(1.5)), ("count", Any::from("x"))] {
        let before = c.field_any(field).unwrap();
        let e = c.set_field(field, bad).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Type, "{}", e);
        assert!(e.message().starts_with(&format!("Mismatched type on field `{}` of `rsdef.Circle`", field)), "{}", e.message());
        assert!(c.field_any(field).unwrap() == before, "{} unchanged", field);
    }
    // A required Optional field must still be given (None is a value, not a default).
    let e = Circle::create(&[AnyView::from(1i64)], &[]).unwrap_err();
    assert!(e.message().contains("`tag`"), "{}", e.message());
    // The constructor refuses a wrong type too.
    let e = Circle::create(&[AnyView::from(1i64), AnyView::from(2i64)], &[]).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    let _ = ObjectRef::from(c);
}
