//! An ffikit module written in Rust. Built as a `cdylib`, it exports the symbols of
//! ffikit's module convention (ffikit/module.h), so `ffk_module_load` (C),
//! `Module::load` (Rust) and the Python binding load it like a C module:
//!
//! * `rs_add(int, int) -> int`, typed through `ffikit_sig_rs_add`;
//! * `rs_describe(x)`, untyped: the repr and type name of its argument;
//! * `rs_fail(kind, message)`: raises an Error of that kind from Rust;
//! * a reflected type defined in Rust, `rustmod.Vec2` ([`Vec2`]: float fields `x`, `y`, a
//!   str field `label`, methods `norm`, `scale` and `describe`, the static method
//!   `unit_x`), registered by the init
//!   entry, so C, Python and Rust construct it by key and see its fields and methods;
//! * `rs_make_vec2(x, y, label) -> rustmod.Vec2`;
//! * its child type `rustmod.Vec3` ([`Vec3`], `parent = Vec2`: a float field `z`, an
//!   `Optional<rustmod.Vec2>` field `frame`, the method `norm3`) and
//!   `rs_make_vec3(x, y, z, label) -> rustmod.Vec3`;
//! * `rs_get_field(obj, name)`, `rs_set_field(obj, name, value)`,
//!   `rs_call_method(obj, name, *args)`, `rs_field_names(obj)`: fields and methods of any
//!   reflected object by name, from Rust (how Python code changes a C-defined object from
//!   Rust in the cross-language test);
//! * `rs_vec2_sum_x(objs)`: reads `x` of each `rustmod.Vec2` through the typed handle
//!   (an atomic load at the field's offset, no name lookup);
//! * `rs_field_types(obj)`: "name: type" of each field, as Rust reads the type's
//!   description (a type defined in C, Python or Rust alike);
//! * the structural tools and the JSON graph from Rust, for the cross-language tests:
//!   `rs_structural_equal(a, b)`, `rs_structural_hash(x)` (the 64 bits as a signed int),
//!   `rs_first_mismatch(a, b)` (None or an Array of the two AccessPaths), `rs_deep_copy(x)`,
//!   `rs_to_json_graph(x, metadata)` (metadata None or a str-keyed Map) and
//!   `rs_from_json_graph(text)`;
//! * its init entry registers the global `rustmod.greet(name: str) -> str`.
use ffikit::{Any, AnyView, Array, Error, Function, Map, Module, ObjectRef, Reflect, Result};

ffikit::module_abi_version!();

fn add(args: &[AnyView]) -> Result<Any> {
    Ok(Any::from(args[0].to::<i64>()? + args[1].to::<i64>()?))
}
ffikit::export_function!(rs_add, "(int, int) -> int", add);

fn describe(args: &[AnyView]) -> Result<Any> {
    let v = args.first().ok_or_else(|| Error::new("TypeError", "rs_describe takes 1 argument"))?;
    Ok(Any::from(format!("{} ({})", v, v.type_name())))
}
ffikit::export_function!(rs_describe, describe);

fn fail(args: &[AnyView]) -> Result<Any> {
    Err(Error::new(args[0].as_str()?, args[1].as_str()?))
}
ffikit::export_function!(rs_fail, "(str, str) -> None", fail);

ffikit::reflected_type! {
    /// A 2-D vector whose type is defined in Rust.
    #[type_key = "rustmod.Vec2", layout = Vec2Layout]
    pub struct Vec2 {
        /// The x coordinate.
        #[writable(set_x)]
        x: f64 = 0.0,
        /// The y coordinate.
        #[writable(set_y)]
        y: f64 = 0.0,
        /// A label for printing.
        #[writable(set_label)]
        label: String = "v".to_string(),
    }
    methods {
        /// The Euclidean length.
        fn norm(this: Vec2) -> Result<f64> {
            Ok(this.x().hypot(this.y()))
        }
        /// A new vector scaled by k (same label).
        fn scale(this: Vec2, k: f64) -> Result<Vec2> {
            Vec2::new(this.x() * k, this.y() * k, this.label()?)
        }
        /// "label(x, y)", read by Rust.
        fn describe(this: Vec2) -> Result<String> {
            Ok(format!("{}({}, {})", this.label()?, this.x(), this.y()))
        }
    }
    static_methods {
        /// The vector (1, 0), labelled "x".
        fn unit_x() -> Result<Vec2> {
            Vec2::new(1.0, 0.0, "x".into())
        }
    }
}

ffikit::reflected_type! {
    /// A 3-D vector: a `rustmod.Vec2` with a z coordinate and an optional frame.
    #[type_key = "rustmod.Vec3", layout = Vec3Layout, parent = Vec2]
    pub struct Vec3 {
        /// The z coordinate.
        #[writable(set_z)]
        z: f64 = 0.0,
        /// The vector this one is relative to, or None.
        #[writable(set_frame)]
        frame: Option<Vec2> = None,
    }
    methods {
        /// The Euclidean length in 3-D (x and y read through the parent's getters).
        fn norm3(this: Vec3) -> Result<f64> {
            Ok((this.x() * this.x() + this.y() * this.y() + this.z() * this.z()).sqrt())
        }
    }
}

fn make_vec3(args: &[AnyView]) -> Result<Any> {
    let named = [("x", args[0]), ("y", args[1]), ("z", args[2]), ("label", args[3])];
    Ok(Any::from(&Vec3::create(&[], &named)?))
}
ffikit::export_function!(rs_make_vec3, "(x: float, y: float, z: float, label: str) -> Object", make_vec3);

fn make_vec2(args: &[AnyView]) -> Result<Any> {
    let v = Vec2::new(args[0].to::<f64>()?, args[1].to::<f64>()?, args[2].to::<String>()?)?;
    Ok(Any::from(&v))
}
ffikit::export_function!(rs_make_vec2, "(x: float, y: float, label: str) -> Object", make_vec2);

fn arg_object(args: &[AnyView], what: &str, n: usize) -> Result<ObjectRef> {
    if args.len() < n {
        return Err(Error::new("TypeError", &format!("{} takes at least {} arguments but {} were given", what, n, args.len())));
    }
    args[0].to_object()
}

fn get_field(args: &[AnyView]) -> Result<Any> {
    let o = arg_object(args, "rs_get_field", 2)?;
    o.field_any(args[1].as_str()?)
}
ffikit::export_function!(rs_get_field, "(obj: Object, name: str) -> Any", get_field);

fn set_field(args: &[AnyView]) -> Result<Any> {
    let o = arg_object(args, "rs_set_field", 3)?;
    o.set_field_view(args[1].as_str()?, args[2])?;
    Ok(Any::none())
}
ffikit::export_function!(rs_set_field, "(obj: Object, name: str, value: Any) -> None", set_field);

fn call_method(args: &[AnyView]) -> Result<Any> {
    let o = arg_object(args, "rs_call_method", 2)?;
    o.call_method(args[1].as_str()?, &args[2..])
}
ffikit::export_function!(rs_call_method, call_method);

fn field_names(args: &[AnyView]) -> Result<Any> {
    let o = arg_object(args, "rs_field_names", 1)?;
    let names: Array<String> = o.fields()?.iter().map(|f| f.name().to_string()).collect();
    Ok(Any::from(&names))
}
ffikit::export_function!(rs_field_names, "(obj: Object) -> Array<str>", field_names);

fn vec2_sum_x(args: &[AnyView]) -> Result<Any> {
    let objs = args.first().ok_or_else(|| Error::new("TypeError", "rs_vec2_sum_x takes 1 argument"))?.to::<Array<Any>>()?;
    let mut sum = 0.0;
    for v in objs.iter() {
        sum += v.to::<Vec2>()?.x();
    }
    Ok(Any::from(sum))
}
ffikit::export_function!(rs_vec2_sum_x, "(objs: Array) -> float", vec2_sum_x);

fn field_types(args: &[AnyView]) -> Result<Any> {
    let o = arg_object(args, "rs_field_types", 1)?;
    let fields: Array<String> = o.fields()?.iter().map(|f| format!("{}: {}", f.name(), f.type_text())).collect();
    Ok(Any::from(&fields))
}
ffikit::export_function!(rs_field_types, "(obj: Object) -> Array<str>", field_types);

fn structural_equal(args: &[AnyView]) -> Result<Any> {
    Ok(Any::from(ffikit::structural_eq(args[0], args[1])?))
}
ffikit::export_function!(rs_structural_equal, "(a: Any, b: Any) -> bool", structural_equal);

fn structural_hash(args: &[AnyView]) -> Result<Any> {
    // The hash's 64 bits, reinterpreted as the int a value holds.
    Ok(Any::from(ffikit::structural_hash(args[0])? as i64))
}
ffikit::export_function!(rs_structural_hash, "(x: Any) -> int", structural_hash);

fn first_mismatch(args: &[AnyView]) -> Result<Any> {
    Ok(match ffikit::first_structural_mismatch(args[0], args[1])? {
        None => Any::none(),
        Some((lhs, rhs)) => Any::from(&Array::<ObjectRef>::from(vec![lhs.into(), rhs.into()])),
    })
}
ffikit::export_function!(rs_first_mismatch, "(a: Any, b: Any) -> Optional<Array<Object>>", first_mismatch);

fn deep_copy(args: &[AnyView]) -> Result<Any> {
    ffikit::deep_copy(args[0])
}
ffikit::export_function!(rs_deep_copy, "(x: Any) -> Any", deep_copy);

fn to_json_graph(args: &[AnyView]) -> Result<Any> {
    let metadata = if args[1].is_none() { None } else { Some(args[1].to::<Map<String, Any>>()?) };
    Ok(Any::from(ffikit::to_json_graph(args[0], metadata.as_ref())?))
}
ffikit::export_function!(rs_to_json_graph, "(x: Any, metadata: Optional<Map<str, Any>>) -> str", to_json_graph);

fn from_json_graph(args: &[AnyView]) -> Result<Any> {
    ffikit::from_json_graph(args[0].as_str()?)
}
ffikit::export_function!(rs_from_json_graph, "(text: str) -> Any", from_json_graph);

fn init(_m: &Module) -> Result<()> {
    Vec2::type_index()?;
    Vec3::type_index()?;
    let greet = Function::from_typed("rustmod.greet", |(name,): (String,)| Ok(format!("hello, {} (from Rust)", name)))?;
    greet.register_global("rustmod.greet", true)
}
ffikit::module_init!(init);
