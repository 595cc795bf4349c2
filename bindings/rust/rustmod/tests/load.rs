//! The Rust-built module loads from Rust (Module::load) and from a C program, and the type
//! it defines in Rust (rustmod.Vec2) is the same type for the loaded library and for this
//! test's own copy of the code.
use ffikit::{Any, AnyView, Function, Module, ObjectRef, Reflect, TypeInfo};
use ffikit_rustmod::Vec2;
use std::path::PathBuf;
use std::process::Command;

/// libffikit_rustmod.so, which cargo builds next to this test binary (target/*/deps).
fn module_path() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let p = deps.join("libffikit_rustmod.so");
    assert!(p.exists(), "{} missing", p.display());
    p
}

#[test]
fn loads_from_rust() {
    let m = Module::load(module_path().to_str().unwrap()).unwrap();
    let add = m.get_function("rs_add").unwrap();
    assert_eq!(add.signature().unwrap(), "rs_add(0: int, 1: int) -> int");
    assert_eq!(add.call_typed::<_, i64>((40i64, 2i64)).unwrap(), 42);
    let describe = m.get_function("rs_describe").unwrap();
    assert_eq!(describe.signature(), None);
    assert_eq!(describe.call(&[AnyView::from(1.5)]).unwrap().as_str().unwrap(), "1.5 (float)");
    let e = m.get_function("rs_fail").unwrap().call(&[Any::from("KeyError").view(), Any::from("nope").view()]).unwrap_err();
    assert_eq!(e.to_string(), "KeyError: nope");
    let greet = Function::get_global("rustmod.greet").unwrap().expect("registered by the init entry");
    assert_eq!(greet.call_typed::<_, String>(("Rust".to_string(),)).unwrap(), "hello, Rust (from Rust)");
    // Kept loaded (idempotent; a module whose init ran is kept anyway): still callable.
    m.keep_loaded().unwrap();
    m.keep_loaded().unwrap();
    drop(m);
    assert_eq!(add.call_typed::<_, i64>((1i64, 2i64)).unwrap(), 3);
}

#[test]
fn loads_from_c() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let exe = dir.join("load_module");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/load_module.c");
    let flags = Command::new("pkg-config").args(["--cflags", "--libs", "ffikit"]).output().unwrap();
    assert!(flags.status.success(), "pkg-config ffikit: {}", String::from_utf8_lossy(&flags.stderr));
    let flags = String::from_utf8(flags.stdout).unwrap();
    let cc = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror"])
        .arg(&src)
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(cc.status.success(), "cc: {}", String::from_utf8_lossy(&cc.stderr));
    let out = Command::new(&exe).arg(module_path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}{}", text, String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        text,
        "rs_add(0: int, 1: int) -> int = 42\nTypeError\nmylib.Error: from Rust\nhello, C (from Rust)\n\
         rustmod.Vec2.norm() = 5\ndescribe() = c(6, 4)\n\
         TypeError: Mismatched type on field `label` of `rustmod.Vec2`: expected `str` but got `int`\n"
    );
}

#[test]
fn the_rust_defined_type_is_one_type_for_every_copy_of_the_code() {
    let m = Module::load(module_path().to_str().unwrap()).unwrap();
    // The loaded library registered it in its init entry; this binary's copy of the same
    // definition finds the same index (ffk_type_define is idempotent).
    let loaded = TypeInfo::lookup("rustmod.Vec2").unwrap().expect("registered by the module's init");
    assert_eq!(Vec2::type_index().unwrap(), loaded.index());
    let make = m.get_function("rs_make_vec2").unwrap();
    let v = make.call(&[AnyView::from(3.0), AnyView::from(4.0), Any::from("made by the library").view()]).unwrap();
    let v: Vec2 = v.to().unwrap();
    assert_eq!((v.x(), v.y(), v.label().unwrap()), (3.0, 4.0, "made by the library".to_string()));
    assert_eq!(v.call_method("norm", &[]).unwrap().to::<f64>().unwrap(), 5.0);
    v.set_y(0.0).unwrap();
    let sum = m.get_function("rs_vec2_sum_x").unwrap();
    let all: ffikit::Array<Any> = vec![Any::from(&v), Any::from(&Vec2::new(1.5, 0.0, "b".into()).unwrap())].into();
    assert_eq!(sum.call(&[AnyView::from(&all)]).unwrap().to::<f64>().unwrap(), 4.5);
    // The by-name functions work on a C-defined type too.
    let testing_lib = std::env::var("FFIKIT_TESTING_LIB").expect("set by .cargo/config.toml");
    let _t = Module::load(&testing_lib).unwrap();
    let base = TypeInfo::lookup("testing.TestObjectBase").unwrap().unwrap();
    let o: ObjectRef = base.create(&[], &[]).unwrap();
    m.get_function("rs_set_field").unwrap().call(&[o.view(), Any::from("v_i64").view(), AnyView::from(99i64)]).unwrap();
    assert_eq!(o.field::<i64>("v_i64").unwrap(), 99);
    let got = m.get_function("rs_get_field").unwrap().call(&[o.view(), Any::from("v_str").view()]).unwrap();
    assert_eq!(got.as_str().unwrap(), "hello");
    let r = m.get_function("rs_call_method").unwrap().call(&[o.view(), Any::from("add_i64").view(), AnyView::from(1i64)]).unwrap();
    assert_eq!(r.to::<i64>().unwrap(), 100);
    let names = m.get_function("rs_field_names").unwrap().call(&[o.view()]).unwrap();
    assert_eq!(names.to::<ffikit::Array<String>>().unwrap().to_vec(), ["v_i64", "v_f64", "v_str"]);
    let e = m.get_function("rs_get_field").unwrap().call(&[o.view(), Any::from("nope").view()]).unwrap_err();
    assert_eq!(e.to_string(), "AttributeError: `testing.TestObjectBase` object has no field `nope`");
}
