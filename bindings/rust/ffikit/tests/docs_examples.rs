//! The Rust examples of the documentation site, run as tests: each is an example program
//! (`examples/*.rs`) that the site shows with `literalinclude`, so the page and the test
//! read the same file.
#[path = "../examples/first.rs"]
mod first;

#[test]
fn getting_started_first_program_runs() {
    first::main().expect("the first program (docs/getting-started.md) fails");
}
