//! An ffikit module written in Rust. Built as a `cdylib`, it exports the symbols of
//! ffikit's module convention (ffikit/module.h), so `ffk_module_load` (C),
//! `Module::load` (Rust) and the Python binding load it like a C module:
//!
//! * `rs_add(int, int) -> int`, typed through `ffikit_sig_rs_add`;
//! * `rs_describe(x)`, untyped: the repr and type name of its argument;
//! * `rs_fail(kind, message)`: raises an Error of that kind from Rust;
//! * its init entry registers the global `rustmod.greet(name: str) -> str`.
use ffikit::{Any, AnyView, Error, Function, Module, Result};

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

fn init(_m: &Module) -> Result<()> {
    let greet = Function::from_typed("rustmod.greet", |(name,): (String,)| Ok(format!("hello, {} (from Rust)", name)))?;
    greet.register_global("rustmod.greet", true)
}
ffikit::module_init!(init);
