//! The Rust-built module loads from Rust (Module::load) and from a C program.
use ffikit::{Any, AnyView, Function, Module};
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
        "rs_add(0: int, 1: int) -> int = 42\nTypeError\nmylib.Error: from Rust\nhello, C (from Rust)\n"
    );
}
