//! Reflection: fields and methods by name on C-defined testing types (libffikit_testing.so),
//! field handles, errors with C's kinds and texts, and types defined in Rust with
//! `reflected_type!`, used from C through the raw C API.
mod common;
use common::{live, testing, testing_module};
use ffikit::sys;
use ffikit::{Any, AnyView, Array, ErrorKind, FieldFlags, FieldStorage, Map, ObjectRef, Reflect, Result, TypeInfo};
use std::ffi::CStr;

fn type_of(key: &str) -> TypeInfo {
    testing_module();
    TypeInfo::lookup(key).unwrap().unwrap_or_else(|| panic!("{} is not registered", key))
}

/// Every object of `t` made during `f` is gone afterwards (testing builds count them).
fn no_live_after(t: i32, f: impl FnOnce()) {
    let before = live(t);
    f();
    assert_eq!(live(t), before, "objects of type #{} left alive", t);
}

#[test]
fn c_defined_int_pair_fields_method_and_read_only() {
    let pair = type_of("testing.TestIntPair");
    no_live_after(pair.index(), || {
        let p = pair.create(&[AnyView::from(1i64), AnyView::from(2i64)], &[]).unwrap();
        assert_eq!(p.type_name(), "testing.TestIntPair");
        assert_eq!((p.field::<i64>("a").unwrap(), p.field::<i64>("b").unwrap()), (1, 2));
        assert_eq!(p.call_method("sum", &[]).unwrap().to::<i64>().unwrap(), 3);
        let e = p.set_field("a", 5i64).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Attribute);
        assert_eq!(e.message(), "field `a` of `testing.TestIntPair` is read-only");
        assert_eq!(p.field::<i64>("a").unwrap(), 1, "unchanged after the refused write");
        let fields = p.fields().unwrap();
        let listed: Vec<(&str, &str, Option<&str>)> = fields.iter().map(|f| (f.name(), f.type_text(), f.doc())).collect();
        assert_eq!(listed, [("a", "int", Some("Field `a`")), ("b", "int", Some("Field `b`"))]);
        assert!(fields.iter().all(|f| !f.is_writable() && f.storage() == FieldStorage::Int));
        let methods = p.methods().unwrap();
        assert_eq!(methods.iter().map(|m| m.name()).collect::<Vec<_>>(), ["sum"]);
        assert!(!methods[0].is_static());
        assert_eq!(methods[0].owner(), pair);
    });
}

#[test]
fn c_defined_base_defaults_writes_and_conversions() {
    let base = type_of("testing.TestObjectBase");
    let o = base.create(&[], &[("v_i64", AnyView::from(3i64))]).unwrap();
    assert_eq!(o.field::<i64>("v_i64").unwrap(), 3);
    assert_eq!(o.field::<f64>("v_f64").unwrap(), 10.0);
    assert_eq!(o.field::<String>("v_str").unwrap(), "hello");
    o.set_field("v_i64", 7i64).unwrap();
    o.set_field("v_i64", true).unwrap(); // C converts a bool for an int field to 1
    assert_eq!(o.field::<i64>("v_i64").unwrap(), 1);
    o.set_field("v_str", "a str longer than seven bytes".to_string()).unwrap();
    assert_eq!(o.field::<String>("v_str").unwrap(), "a str longer than seven bytes");
    assert_eq!(o.call_method("add_i64", &[AnyView::from(41i64)]).unwrap().to::<i64>().unwrap(), 42);
    let info = o.type_info();
    let v_i64 = info.field("v_i64").unwrap();
    assert_eq!(v_i64.doc(), Some("i64 field"));
    assert_eq!(v_i64.flags(), FieldFlags::WRITABLE | FieldFlags::HAS_DEFAULT);
    assert_eq!(v_i64.default_value().unwrap().to::<i64>().unwrap(), 10);
    assert_eq!(info.field("v_str").unwrap().storage(), FieldStorage::Object);
    let add = info.find_method("add_i64").unwrap().unwrap();
    assert_eq!(add.doc(), Some("add_i64 method"));
    assert_eq!(add.function().call(&[o.view(), AnyView::from(1i64)]).unwrap().to::<i64>().unwrap(), 2);
}

#[test]
fn errors_carry_cs_kind_and_text() {
    let base = type_of("testing.TestObjectBase");
    let o = base.create(&[], &[]).unwrap();
    let e = o.field::<i64>("nope").unwrap_err();
    assert_eq!(e.to_string(), "AttributeError: `testing.TestObjectBase` object has no field `nope`");
    let e = o.set_field("nope", 1i64).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Attribute);
    let e = o.set_field("v_i64", "x".to_string()).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert!(e.message().starts_with("Mismatched type on field `v_i64` of `testing.TestObjectBase`"), "{}", e.message());
    let e = o.set_field("v_f64", 1.5).unwrap_err();
    assert_eq!(e.message(), "field `v_f64` of `testing.TestObjectBase` is read-only");
    let e = o.call_method("nope", &[]).unwrap_err();
    assert_eq!(e.to_string(), "AttributeError: `testing.TestObjectBase` object has no method `nope`");
    // A typed read of a field of another type: Rust's conversion, C's text.
    let e = o.field::<i64>("v_str").unwrap_err();
    assert_eq!(e.to_string(), "TypeError: expected int but got str");
    // Construction errors.
    let e = base.create(&[], &[("v_i64", Any::from("x").view())]).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    let e = base.create(&[], &[("zzz", AnyView::from(1i64))]).unwrap_err();
    assert_eq!(e.message(), "testing.TestObjectBase.__init__() got an unexpected keyword argument `zzz`");
    let derived = type_of("testing.TestObjectDerived");
    let e = derived.create(&[], &[]).unwrap_err();
    assert!(e.message().contains("missing required argument"), "{}", e.message());
    // Reflection on an object without reflection.
    let a: ObjectRef = Array::<i64>::from(vec![1]).into();
    assert_eq!(a.field_any("x").unwrap_err().error_kind(), ErrorKind::Attribute);
    assert!(a.fields().unwrap().is_empty());
    assert_eq!(a.shallow_copy().unwrap_err().error_kind(), ErrorKind::Type);
}

#[test]
fn derived_inherits_fields_in_parent_order_and_methods() {
    let derived = type_of("testing.TestObjectDerived");
    let base = type_of("testing.TestObjectBase");
    assert_eq!(derived.parent(), Some(base));
    assert!(derived.is_subtype_of(base) && !base.is_subtype_of(derived));
    let names: Vec<&str> = derived.fields().unwrap().iter().map(|f| f.name()).collect();
    assert_eq!(names, ["v_i64", "v_f64", "v_str", "v_map", "v_array"]);
    let m: Map<String, i64> = vec![("k".to_string(), 1)].into();
    let a: Array<i64> = vec![1, 2].into();
    let d = derived.create(&[], &[("v_map", AnyView::from(&m)), ("v_array", AnyView::from(&a))]).unwrap();
    assert_eq!(d.field::<Array<i64>>("v_array").unwrap().to_vec(), vec![1, 2]);
    assert!(d.field::<ObjectRef>("v_map").unwrap().ptr_eq(m.as_object_ref()));
    assert_eq!(d.call_method("add_i64", &[AnyView::from(1i64)]).unwrap().to::<i64>().unwrap(), 11);
    let copy = d.shallow_copy().unwrap();
    assert!(!copy.ptr_eq(&d));
    assert!(copy.field::<ObjectRef>("v_array").unwrap().ptr_eq(&d.field::<ObjectRef>("v_array").unwrap()));
}

trait AsObjectRef {
    fn as_object_ref(&self) -> &ObjectRef;
}
impl<T: ffikit::ObjectType> AsObjectRef for T {
    fn as_object_ref(&self) -> &ObjectRef {
        self.as_object()
    }
}

#[test]
fn testing_globals_make_objects_read_by_rust() {
    let u = testing("make_unregistered_object").call(&[]).unwrap().to::<ObjectRef>().unwrap();
    assert_eq!(u.type_name(), "testing.TestUnregisteredObject");
    assert_eq!((u.field::<i64>("v1").unwrap(), u.field::<i64>("v2").unwrap()), (41, 42));
    assert_eq!(u.call_method("get_v1_plus_one", &[]).unwrap().to::<i64>().unwrap(), 42);
    assert_eq!(u.call_method("get_v2_plus_two", &[]).unwrap().to::<i64>().unwrap(), 44);
    let c = testing("create_object")
        .call(&[Any::from("testing.TestObjectBase").view(), Any::from("v_i64").view(), AnyView::from(5i64)])
        .unwrap()
        .to::<ObjectRef>()
        .unwrap();
    assert_eq!(c.field::<i64>("v_i64").unwrap(), 5);
}

#[test]
fn field_handles_fetched_once_read_and_write() {
    let base = type_of("testing.TestObjectBase");
    let v_i64 = base.field("v_i64").unwrap();
    let v_str = base.field("v_str").unwrap();
    let o = base.create(&[], &[]).unwrap();
    for i in 0..100i64 {
        v_i64.set(&o, i).unwrap();
        assert_eq!(v_i64.get::<i64, _>(&o).unwrap(), i);
    }
    assert_eq!(v_str.get_any(&o).unwrap().as_str().unwrap(), "hello");
    // A handle used on an object of another type: C's TypeError.
    let pair = type_of("testing.TestIntPair").create(&[AnyView::from(1i64), AnyView::from(2i64)], &[]).unwrap();
    assert_eq!(v_i64.get_any(&pair).unwrap_err().error_kind(), ErrorKind::Type);
    assert_eq!(v_i64.set(&pair, 1i64).unwrap_err().error_kind(), ErrorKind::Type);
}

#[test]
fn type_listing() {
    testing_module();
    let keys: Vec<&str> = TypeInfo::all().iter().map(|t| t.key()).collect();
    for k in ["ffikit.Object", "testing.TestObjectBase", "testing.TestIntPair", "testing.TestUnregisteredObject"] {
        assert!(keys.contains(&k), "{} not in {:?}", k, keys);
    }
    // C's ffk_type_check_index decides and words it, as for Python's TypeInfo.
    assert_eq!(TypeInfo::of(-5).unwrap_err().to_string(), "ValueError: type index -5 is not a registered type");
    assert_eq!(FieldStorage::for_type("Optional<Array<str>>").unwrap(), FieldStorage::Object);
}

// ---- Types defined in Rust ----------------------------------------------------------------

ffikit::reflected_type! {
    /// A test type defined in Rust.
    #[type_key = "rstest.Particle", layout = ParticleLayout]
    pub struct Particle {
        /// Position.
        #[writable(set_pos)]
        pos: f64 = 0.0,
        /// Hit count.
        #[writable(set_hits)]
        hits: i64 = 0,
        #[writable(set_alive)]
        alive: bool = true,
        /// A name.
        name: String,
        /// Any value.
        #[writable(set_tag)]
        tag: Any = Any::none(),
        /// Children.
        #[writable(set_kids)]
        #[flags(KW_ONLY)]
        kids: Array<i64> = Array::new().unwrap(),
    }
    methods {
        /// pos * k + hits
        fn weigh(this: Particle, k: f64) -> Result<f64> {
            Ok(this.pos() * k + this.hits() as f64)
        }
        /// The name, upper-cased.
        fn shout(this: Particle) -> Result<String> {
            Ok(this.name()?.to_uppercase())
        }
    }
}

#[test]
fn rust_type_typed_handle_reads_and_writes() {
    let t = Particle::type_index().unwrap();
    let p = Particle::new(1.5, 2, true, "p1".into(), Any::from(7i64), vec![1i64, 2].into()).unwrap();
    assert_eq!((p.pos(), p.hits(), p.alive()), (1.5, 2, true));
    assert_eq!(p.name().unwrap(), "p1");
    assert_eq!(p.tag().unwrap().to::<i64>().unwrap(), 7);
    assert_eq!(p.kids().unwrap().to_vec(), vec![1, 2]);
    p.set_pos(-3.25).unwrap();
    p.set_hits(9).unwrap();
    p.set_alive(false).unwrap();
    p.set_tag(Any::from("tagged")).unwrap();
    assert_eq!((p.pos(), p.hits(), p.alive()), (-3.25, 9, false));
    assert_eq!(p.tag().unwrap().as_str().unwrap(), "tagged");
    // by name, the same fields
    assert_eq!(p.field::<f64>("pos").unwrap(), -3.25);
    p.set_field("hits", 4i64).unwrap();
    assert_eq!(p.hits(), 4);
    assert_eq!(p.call_method("weigh", &[AnyView::from(2.0)]).unwrap().to::<f64>().unwrap(), -2.5);
    assert_eq!(p.call_method("shout", &[]).unwrap().as_str().unwrap(), "P1");
    assert_eq!(p.set_field("name", "q".to_string()).unwrap_err().message(), "field `name` of `rstest.Particle` is read-only");
    let e = p.set_field("pos", "far".to_string()).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    // the description C holds
    let info = TypeInfo::of(t).unwrap();
    assert_eq!(info.key(), "rstest.Particle");
    assert_eq!(info.doc(), Some("A test type defined in Rust."));
    assert_eq!(info.instance_size(), std::mem::size_of::<ParticleLayout>());
    let fields = info.fields().unwrap();
    let listed: Vec<(&str, &str, FieldStorage)> = fields.iter().map(|f| (f.name(), f.type_text(), f.storage())).collect();
    assert_eq!(
        listed,
        [
            ("pos", "float", FieldStorage::Float),
            ("hits", "int", FieldStorage::Int),
            ("alive", "bool", FieldStorage::Bool),
            ("name", "str", FieldStorage::Object),
            ("tag", "Any", FieldStorage::Any),
            ("kids", "Array<int>", FieldStorage::Object),
        ]
    );
    assert_eq!(fields[0].offset(), std::mem::offset_of!(ParticleLayout, pos));
    assert_eq!(fields[0].doc(), Some("Position."));
    assert_eq!(fields[2].doc(), None);
    assert_eq!(fields[3].flags(), FieldFlags::empty());
    assert_eq!(fields[5].flags(), FieldFlags::WRITABLE | FieldFlags::HAS_DEFAULT | FieldFlags::KW_ONLY);
    let methods = info.methods().unwrap();
    assert_eq!(methods.iter().map(|m| (m.name(), m.doc())).collect::<Vec<_>>(), [("weigh", Some("pos * k + hits")), ("shout", Some("The name, upper-cased."))]);
    assert_eq!(methods[0].function().signature().unwrap(), "rstest.Particle.weigh(0: rstest.Particle, 1: float) -> float");
}

#[test]
fn rust_type_defaults_constructor_errors_and_downcasts() {
    let p = Particle::create(&[], &[("name", Any::from("d").view())]).unwrap();
    assert_eq!((p.pos(), p.hits(), p.alive()), (0.0, 0, true));
    assert!(p.tag().unwrap().is_none());
    assert!(p.kids().unwrap().is_empty());
    let e = Particle::create(&[], &[]).unwrap_err();
    assert_eq!(e.message(), "rstest.Particle.__init__() missing required argument: `name`");
    let e = Particle::create(&[AnyView::from(1.0), AnyView::from(1i64), AnyView::from(true), Any::from("n").view(), AnyView::from(1i64), AnyView::from(1i64)], &[]).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type, "kids is keyword-only: {}", e);
    // downcasts check the runtime type index
    let o: ObjectRef = p.clone().into();
    let back: Particle = o.downcast().unwrap();
    assert!(back.ptr_eq_obj(&p));
    let other: ObjectRef = Array::<i64>::new().unwrap().into();
    let e = other.clone().downcast::<Particle>().unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    // the handle is an element type: in containers and typed Functions
    let arr: Array<Particle> = vec![p.clone()].into();
    assert_eq!(arr.get(0).unwrap().name().unwrap(), "d");
    let f = ffikit::Function::from_typed("rstest.hits_of", |(q,): (Particle,)| Ok(q.hits())).unwrap();
    assert_eq!(f.signature().unwrap(), "rstest.hits_of(0: rstest.Particle) -> int");
    assert_eq!(f.call(&[AnyView::from(&p)]).unwrap().to::<i64>().unwrap(), 0);
    let e = f.call(&[AnyView::from(&other)]).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    // a shallow copy by C holds the same field values
    let q: Particle = p.shallow_copy().unwrap().downcast().unwrap();
    assert!(!q.ptr_eq_obj(&p));
    assert_eq!((q.name().unwrap(), q.pos()), ("d".to_string(), 0.0));
}

trait PtrEq {
    fn ptr_eq_obj(&self, other: &Self) -> bool;
}
impl<T: ffikit::ObjectType> PtrEq for T {
    fn ptr_eq_obj(&self, other: &T) -> bool {
        self.as_object().ptr_eq(other.as_object())
    }
}

ffikit::reflected_type! {
    #[type_key = "rstest.Lonely", layout = LonelyLayout]
    pub struct Lonely {
        #[writable(set_n)]
        n: i64 = 0,
        s: String = "s".to_string(),
    }
}

/// The C side: a type defined in Rust, used through the raw C API (what a C library does).
#[test]
fn rust_type_used_from_c_through_the_raw_api() {
    let index = Lonely::type_index().unwrap();
    no_live_after(index, || unsafe {
        let mut found = 0;
        assert_eq!(sys::ffk_type_lookup(c"rstest.Lonely".as_ptr(), &mut found), 1);
        assert_eq!(found, index);
        assert!(sys::ffk_type_is_reflected(index));
        assert_eq!(sys::ffk_type_num_fields(index), 2);
        let args = [sys::ffk_any_int(5)];
        let mut obj: *mut sys::ffk_object = std::ptr::null_mut();
        assert_eq!(sys::ffk_object_create(index, args.as_ptr(), 1, std::ptr::null(), 0, &mut obj), 0);
        let mut out = sys::ffk_any_none();
        assert_eq!(sys::ffk_object_get_field(obj, c"n".as_ptr(), &mut out), 0);
        assert_eq!((out.type_index, out.__bindgen_anon_1.v_int), (sys::ffk_type_index::FFK_TYPE_INT.0 as i32, 5));
        // C writes, the Rust typed handle reads at the offset.
        let v = sys::ffk_any_int(12);
        assert_eq!(sys::ffk_object_set_field(obj, c"n".as_ptr(), &v), 0);
        let handle: Lonely = ObjectRef::from_borrowed(obj).downcast().unwrap();
        assert_eq!(handle.n(), 12);
        // Rust writes, C reads.
        handle.set_n(-1).unwrap();
        assert_eq!(sys::ffk_object_get_field(obj, c"n".as_ptr(), &mut out), 0);
        assert_eq!(out.__bindgen_anon_1.v_int, -1);
        // Read-only from C too, with the same text.
        assert_eq!(sys::ffk_object_set_field(obj, c"s".as_ptr(), &v), -1);
        let err = sys::ffk_error_fetch();
        assert_eq!(CStr::from_ptr(sys::ffk_error_message(err)).to_str().unwrap(), "field `s` of `rstest.Lonely` is read-only");
        sys::ffk_object_release(err.cast());
        let mut s = sys::ffk_any_none();
        assert_eq!(sys::ffk_object_get_field(obj, c"s".as_ptr(), &mut s), 0);
        let view = AnyView::from_raw(s);
        assert_eq!(view.as_str().unwrap(), "s");
        sys::ffk_any_release(&mut s);
        drop(handle);
        sys::ffk_object_release(obj);
    });
}

ffikit::reflected_type! {
    #[type_key = "rstest.Clash", layout = ClashLayout]
    pub struct Clash {
        a: i64,
    }
}
mod second_copy {
    ffikit::reflected_type! {
        /// Same key, another description: what two libraries disagreeing would do.
        #[type_key = "rstest.Clash", layout = ClashLayout]
        pub struct Clash {
            a: f64,
        }
    }
    // Same key, same description: another copy of the same code (idempotent).
    ffikit::reflected_type! {
        #[type_key = "rstest.Lonely", layout = LonelyLayout]
        pub struct Lonely {
            #[writable(set_n)]
            n: i64 = 0,
            s: String = "s".to_string(),
        }
    }
}

#[test]
fn redefinition_is_idempotent_and_a_clash_is_an_error() {
    assert_eq!(second_copy::Lonely::type_index().unwrap(), Lonely::type_index().unwrap());
    let first = Clash::type_index().unwrap();
    let e = second_copy::Clash::type_index().unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Value, "{}", e);
    assert!(e.message().contains("rstest.Clash"), "{}", e.message());
    // the registered one still works
    let c = Clash::new(3).unwrap();
    assert_eq!((c.a(), Clash::type_index().unwrap()), (3, first));
}

#[test]
fn concurrent_writes_are_seen_whole_by_typed_readers() {
    let p = Particle::create(&[], &[("name", Any::from("threads").view())]).unwrap();
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let p = p.clone();
            s.spawn(move || {
                for i in 0..2000i64 {
                    if t % 2 == 0 {
                        p.set_hits(i * 1_000_000_007).unwrap();
                        p.set_pos(i as f64 * 0.5).unwrap();
                        p.set_tag(Any::from(format!("tag number {}", i))).unwrap();
                    } else {
                        assert_eq!(p.hits() % 1_000_000_007, 0);
                        assert_eq!((p.pos() * 2.0).fract(), 0.0);
                        let tag = p.tag().unwrap();
                        assert!(tag.is_none() || tag.as_str().unwrap().starts_with("tag number "));
                    }
                }
            });
        }
    });
}

ffikit::reflected_type! {
    #[type_key = "rstest.Leaf", layout = LeafLayout]
    pub struct Leaf {
        v: i64,
    }
}
ffikit::reflected_type! {
    #[type_key = "rstest.Unused", layout = UnusedLayout]
    pub struct Unused {
        v: i64 = 1,
    }
}
ffikit::reflected_type! {
    /// Fields whose types are other Rust-defined types.
    #[type_key = "rstest.Tree", layout = TreeLayout]
    pub struct Tree {
        #[writable(set_leaf)]
        leaf: Leaf,
        leaves: Array<Leaf> = Array::new().unwrap(),
    }
}

#[test]
fn types_named_by_fields_and_signatures_are_registered_first() {
    // Nothing has touched Leaf or Unused before: naming them registers them.
    let f = ffikit::Function::from_typed("rstest.unused_v", |(u,): (Unused,)| Ok(u.v())).unwrap();
    assert_eq!(f.signature().unwrap(), "rstest.unused_v(0: rstest.Unused) -> int");
    assert_eq!(f.call(&[AnyView::from(&Unused::new(7).unwrap())]).unwrap().to::<i64>().unwrap(), 7);
    let leaf = Leaf::new(1).unwrap();
    let t = Tree::new(leaf.clone(), vec![Leaf::new(2).unwrap(), Leaf::new(3).unwrap()].into()).unwrap();
    let fields = Tree::type_info().unwrap().fields().unwrap();
    assert_eq!(fields.iter().map(|f| f.type_text()).collect::<Vec<_>>(), ["rstest.Leaf", "Array<rstest.Leaf>"]);
    assert_eq!(t.leaf().unwrap().v(), 1);
    assert_eq!(t.leaves().unwrap().iter().map(|l| l.v()).collect::<Vec<_>>(), vec![2, 3]);
    // C checks the field's type: a Leaf field refuses another object.
    let e = t.set_field("leaf", Unused::new(1).unwrap()).unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type, "{}", e);
    t.set_leaf(Leaf::new(9).unwrap()).unwrap();
    assert_eq!(t.leaf().unwrap().v(), 9);
}

#[test]
fn names_of_any_length_or_with_a_nul_byte() {
    let t = Leaf::new(1).unwrap();
    let long = "x".repeat(200);
    assert_eq!(t.field_any(&long).unwrap_err().message(), format!("`rstest.Leaf` object has no field `{}`", long));
    let e = t.field_any("v\0w").unwrap_err();
    assert_eq!(e.to_string(), "ValueError: string has a NUL byte at offset 1");
    assert_eq!(t.call_method(&long, &[]).unwrap_err().error_kind(), ErrorKind::Attribute);
    assert_eq!(t.set_field_view("v\0", AnyView::from(1i64)).unwrap_err().error_kind(), ErrorKind::Value);
}

#[test]
fn repr_and_structural_equality_read_the_rust_fields_through_c() {
    let a = Leaf::new(5).unwrap();
    let b = Leaf::new(5).unwrap();
    let c = Leaf::new(6).unwrap();
    let t = Tree::new(a.clone(), vec![c.clone()].into()).unwrap();
    assert_eq!(a.to_string(), "rstest.Leaf(v=5)");
    assert_eq!(format!("{:?}", t), "rstest.Tree(leaf=rstest.Leaf(v=5), leaves=(rstest.Leaf(v=6),))");
    // PartialEq is C's structural equality, field by field.
    assert!(a == b && a != c);
    let t2 = Tree::new(b.clone(), vec![Leaf::new(6).unwrap()].into()).unwrap();
    assert!(t == t2);
    assert!(Any::from(&t) == Any::from(&t2));
}

#[test]
fn field_values_reads_every_field_in_order_sharing_containers() {
    let derived = type_of("testing.TestObjectDerived");
    no_live_after(derived.index(), || {
        let m: Map<String, i64> = vec![("k".to_string(), 1)].into();
        let a: Array<i64> = vec![1, 2].into();
        let d = derived.create(&[], &[("v_i64", AnyView::from(4i64)), ("v_map", AnyView::from(&m)), ("v_array", AnyView::from(&a))]).unwrap();
        let values = d.field_values().unwrap();
        assert_eq!(values.len(), 5, "inherited fields first, then the derived type's");
        assert_eq!(values[0].to::<i64>().unwrap(), 4);
        assert_eq!(values[1].to::<f64>().unwrap(), 10.0);
        assert_eq!(values[2].to::<String>().unwrap(), "hello");
        // The very containers, not copies.
        assert!(values[3].to::<ObjectRef>().unwrap().ptr_eq(m.as_object_ref()));
        assert!(values[4].to::<ObjectRef>().unwrap().ptr_eq(a.as_object_ref()));
        // Read-only fields too.
        let pair = type_of("testing.TestIntPair").create(&[AnyView::from(1i64), AnyView::from(2i64)], &[]).unwrap();
        let v: Vec<i64> = pair.field_values().unwrap().iter().map(|v| v.to::<i64>().unwrap()).collect();
        assert_eq!(v, [1, 2]);
    });
    // An object not made by reflection.
    let e = Array::<i64>::from(vec![1]).field_values().unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert!(e.message().starts_with("cannot read the fields of a `"), "{}", e.message());
}

#[test]
fn new_with_fields_writes_read_only_fields_converting_and_refuses_all_or_nothing() {
    let pair = type_of("testing.TestIntPair");
    no_live_after(pair.index(), || {
        let p = pair.new_with_fields(&[AnyView::from(3i64), AnyView::from(true)]).unwrap();
        assert_eq!((p.field::<i64>("a").unwrap(), p.field::<i64>("b").unwrap()), (3, 1), "bool converted to int");
        // Round trip: the values read give an equal object back.
        let vals = p.field_values().unwrap();
        let views: Vec<AnyView> = vals.iter().map(|v| v.view()).collect();
        let q = pair.new_with_fields(&views).unwrap();
        assert!(ffikit::structural_eq(&p, &q).unwrap());
        // A wrong count, a wrong type.
        let e = pair.new_with_fields(&[AnyView::from(1i64)]).unwrap_err();
        assert_eq!(e.to_string(), "ValueError: `testing.TestIntPair` has 2 fields, not 1");
        let s = Any::from("x");
        let e = pair.new_with_fields(&[AnyView::from(1i64), s.view()]).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Type);
        assert_eq!(e.message(), "Mismatched type on field `b` of `testing.TestIntPair`: expected `int` but got `str`");
    });
    // init_fields on a fresh object: a refused value leaves every field as it was.
    let o = pair.new_default().unwrap();
    let s = Any::from("x");
    // SAFETY: o is fresh from new_default and used by this thread alone.
    let e = unsafe { o.init_fields(&[AnyView::from(5i64), s.view()]) }.unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert_eq!((o.field::<i64>("a").unwrap(), o.field::<i64>("b").unwrap()), (0, 0), "unchanged");
    // SAFETY: as above.
    unsafe { o.init_fields(&[AnyView::from(5i64), AnyView::from(6i64)]) }.unwrap();
    assert_eq!((o.field::<i64>("a").unwrap(), o.field::<i64>("b").unwrap()), (5, 6));
    // A type that is not reflected field-wise.
    let arr = Array::<i64>::from(vec![1]);
    // SAFETY: arr is held by this thread alone; C refuses before writing anything.
    let e = unsafe { arr.init_fields(&[]) }.unwrap_err();
    assert_eq!(e.error_kind(), ErrorKind::Type);
    assert!(e.message().starts_with("cannot set the fields of a `"), "{}", e.message());
}
