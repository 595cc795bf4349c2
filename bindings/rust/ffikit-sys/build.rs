//! Generates the bindings with Debian's bindgen CLI (0.60) from the installed headers
//! (`pkg-config ffikit`), compiles the static-inline shim, and tells cargo how to link.
//! No crates: pkg-config, bindgen, cc and ar run as commands.
use std::{env, path::PathBuf, process::Command};

fn output(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("failed to spawn {:?}: {}", cmd, e));
    if !out.status.success() {
        panic!("{:?} failed:\n{}", cmd, String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8(out.stdout).expect("command output is not UTF-8")
}

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let statik = env::var_os("CARGO_FEATURE_STATIC").is_some();
    for v in ["PKG_CONFIG_PATH", "PKG_CONFIG", "BINDGEN", "CC"] {
        println!("cargo:rerun-if-env-changed={}", v);
    }
    println!("cargo:rerun-if-changed=csrc");

    // pkg-config: -I for bindgen and cc; -L, -l and -Wl,-rpath for the link.
    let pkgconf = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let mut args = vec!["--cflags", "--libs"];
    if statik {
        args.push("--static");
    }
    let flags = output(Command::new(&pkgconf).args(&args).arg("ffikit"));

    // One version: this crate's is the C library's FFK_VERSION. Before 1.0 a minor release
    // may change the ABI, so bindings of another major.minor than the library they would
    // link are refused; another patch release only warns.
    let found = output(Command::new(&pkgconf).args(["--modversion", "ffikit"]));
    let ours = env::var("CARGO_PKG_VERSION").unwrap();
    let (found, ours) = (found.trim(), ours.as_str());
    let major_minor = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
    if major_minor(found) != major_minor(ours) {
        panic!(
            "pkg-config found ffikit {} but ffikit-sys {} binds ffikit {}.x: install that version \
             (or point PKG_CONFIG_PATH at one)",
            found,
            ours,
            major_minor(ours)
        );
    } else if found != ours {
        println!("cargo:warning=ffikit-sys {} builds against ffikit {} (another patch release)", ours, found);
    }
    let (mut incs, mut rpaths, mut libdir) = (Vec::new(), Vec::new(), None);
    for f in flags.split_whitespace() {
        if let Some(d) = f.strip_prefix("-I") {
            incs.push(d.to_string());
        } else if let Some(d) = f.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", d);
            libdir.get_or_insert(d.to_string());
        } else if let Some(l) = f.strip_prefix("-l") {
            // Only ffikit itself goes static; system libraries stay dynamic. The whole
            // archive: ffikit's layers register their repr and converter slots from
            // constructors that nothing references, which a plain archive link drops.
            let kind = if statik && l == "ffikit" { "static:+whole-archive=" } else { "" };
            println!("cargo:rustc-link-lib={}{}", kind, l);
        } else if let Some(d) = f.strip_prefix("-Wl,-rpath,") {
            if !rpaths.contains(&d.to_string()) {
                rpaths.push(d.to_string());
            }
        }
    }
    for d in &rpaths {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d); // this package's targets only
    }
    // cargo puts link-search directories inside target/ on LD_LIBRARY_PATH when it runs
    // tests, examples and benches of every crate: expose libffikit.so through one.
    if !statik {
        if let Some(dir) = &libdir {
            let rt = out.join("rt");
            std::fs::create_dir_all(&rt).unwrap();
            let so = rt.join("libffikit.so");
            let _ = std::fs::remove_file(&so);
            std::os::unix::fs::symlink(PathBuf::from(dir).join("libffikit.so"), &so).unwrap();
            println!("cargo:rustc-link-search=native={}", rt.display());
        }
    }
    // DEP_FFIKIT_LIBDIR / _INCLUDE / _RPATH for direct dependents' build scripts.
    println!("cargo:libdir={}", libdir.unwrap_or_default());
    println!("cargo:include={}", incs.join(":"));
    println!("cargo:rpath={}", rpaths.join(":"));
    let iflags: Vec<String> = incs.iter().map(|d| format!("-I{}", d)).collect();
    for d in &incs {
        let dir = PathBuf::from(d).join("ffikit");
        if dir.is_dir() {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
    }

    // The flags are for Debian 12's bindgen 0.60 (later releases dropped --size_t-is-usize).
    let bindgen = env::var("BINDGEN").unwrap_or_else(|_| "bindgen".into());
    let version = output(Command::new(&bindgen).arg("--version"));
    assert!(version.starts_with("bindgen 0.60."), "expected bindgen 0.60.x, got {}", version.trim());
    output(
        Command::new(&bindgen)
            .arg(manifest.join("csrc/ffikit_sys.h"))
            .arg("-o")
            .arg(out.join("bindings.rs"))
            .args(["--allowlist-function", "ffk_.*", "--allowlist-type", "ffk_.*|DL.*"])
            .args(["--allowlist-var", "FFK_.*|FFKRS_.*|DLPACK_.*|kDL.*"])
            .args(["--blocklist-function", "ffk_error_setv_at"]) // va_list
            .args(["--blocklist-type", "va_list|__builtin_va_list|__va_list_tag"])
            .args(["--size_t-is-usize", "--newtype-enum", "ffk_type_index", "--newtype-enum", "ffk_map_part"])
            .args(["--newtype-enum", "ffk_field_storage", "--newtype-enum", "ffk_access_kind"])
            .args(["--newtype-enum", "ffk_s_kind", "--newtype-enum", "ffk_def_region_kind"])
            .args(["--newtype-enum", "ffk_walk_order", "--newtype-enum", "ffk_enum_kind"])
            .arg("--with-derive-default")
            .arg("--")
            .args(&iflags),
    );

    // The static inline helpers, out of line, in a small archive bundled into the rlib.
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let obj = out.join("ffikit_sys.o");
    output(
        Command::new(&cc)
            .args(["-std=c11", "-O2", "-fPIC", "-c"])
            .args(&iflags)
            .arg(manifest.join("csrc/ffikit_sys.c"))
            .arg("-o")
            .arg(&obj),
    );
    let lib = out.join("libffikit_sys_inline.a");
    let _ = std::fs::remove_file(&lib);
    output(Command::new("ar").arg("crs").arg(&lib).arg(&obj));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=ffikit_sys_inline");
}
