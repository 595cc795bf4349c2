//! The documentation site's first Rust program (docs/getting-started.md): a shared List,
//! a Rust closure registered as a global Function and called by name, and an error that
//! arrives as a `Result`. Run it with `cargo run --offline --example first` in
//! bindings/rust (after `bindings/rust/run.sh build`); `tests/docs_examples.rs` runs it as a test.
use ffikit::{Any, AnyView, Array, Function, List, Result};

pub fn main() -> Result<()> {
    // A List is shared: a clone is a second handle to the same List.
    let xs: List<i64> = List::new()?;
    let same = xs.clone();
    for i in 1..=3 {
        same.push(i * 10)?;
    }
    println!("list: {}", Any::from(&xs));

    // A typed closure in the global registry: C and Python can now call "demo.scale".
    let scale = Function::from_typed("demo.scale", |(x, k): (f64, f64)| Ok(x * k))?;
    scale.register_global("demo.scale", true)?;
    let found = Function::get_global("demo.scale")?.expect("just registered");
    let y = found.call(&[AnyView::from(3i64), AnyView::from(0.5)])?;
    println!("demo.scale(3, 0.5) = {}", y);

    // A wrong argument gives an Err carrying the C error: its kind and message.
    let e = found.call(&[AnyView::from(&Any::from("three")), AnyView::from(0.5)]).unwrap_err();
    println!("{}: {}", e.kind(), e.message());

    // Array is copy-on-write: changing one handle never shows through another.
    let a: Array<i64> = (1..=3).collect();
    let mut b = a.clone();
    b.push(4)?;
    println!("a has {} items, b has {}", a.len(), b.len());
    Ok(())
}
