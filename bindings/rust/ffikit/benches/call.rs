//! Rust's call overhead over `&dyn Fn` (issue 27: within +5 ns): the same body called as a
//! `&dyn Fn`, and as an ffikit Function through the safe crate, with 0, 2 and 8 int
//! arguments. Rows per argument count:
//!   dyn        `&dyn Fn(i64, ..) -> i64`, the baseline
//!   closure    `Function::call` of a Rust closure (`Function::from_packed`)
//!   c_fn       `Function::call` of an `extern "C"` packed function (`ffk_function_new`:
//!              what a Function written in C costs a Rust caller)
//!   typed      `Function::call_typed` of a typed Rust closure (`Function::from_typed`)
//!   typed_call `Function::call` (views) of the same typed Function
//! Every row sums its int arguments (0 for none) and the caller converts the result back
//! to `i64`, so every row does the same work apart from the calling convention.
//!
//! Run: `cargo bench --offline --bench call` in bindings/rust (release build, libffikit.so
//! from .prefix as users link it; `--features static` for libffikit.a). The rows run
//! interleaved, `ROUNDS` times; the table shows the median ns per call, the spread
//! (min-max over the rounds) and the excess and ratio over the `dyn` row of the same
//! argument count, each round's excess taken within that round. Times are the thread's
//! CPU time (CLOCK_THREAD_CPUTIME_ID), so time spent descheduled on a loaded machine is
//! not counted; `--wall` times with `Instant` instead.
//!
//! `cargo bench --bench call -- --icount ROW N` runs only ROW (`closure_2`, ...) N times and
//! prints nothing: `benches/call_icount.sh` runs it under callgrind at two N and prints the
//! instructions per call (the difference over the difference of N, so setup cancels).
use ffikit::{Any, AnyView, Function, ObjectRef, ObjectType};
use std::hint::black_box;
use std::time::Instant;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// Nanoseconds `f` took: the calling thread's CPU time, or wall time when `wall`.
fn elapsed_ns(wall: bool, f: impl FnOnce()) -> f64 {
    if wall {
        let t = Instant::now();
        f();
        return t.elapsed().as_nanos() as f64;
    }
    let cpu = || {
        let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid out pointer; Linux has this clock.
        assert_eq!(unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) }, 0);
        ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
    };
    let t = cpu();
    f();
    cpu() - t
}

const CALLS: i64 = 1_000_000;
const ROUNDS: usize = 11;

/// The `c_fn` rows' callee: sums its int arguments, a TypeError for anything else.
unsafe extern "C" fn c_sum(_ctx: *mut std::ffi::c_void, args: *const ffikit::sys::ffk_any, nargs: i32, result: *mut ffikit::sys::ffk_any) -> i32 {
    let int = ffikit::sys::ffk_type_index::FFK_TYPE_INT.0 as i32;
    let mut s = 0i64;
    for i in 0..nargs.max(0) as usize {
        let a = &*args.add(i);
        if a.type_index != int {
            return ffikit::sys::ffk_error_set(ffikit::sys::FFK_ERR_TYPE.as_ptr().cast(), c"c_sum: argument %d is not an int".as_ptr(), i as i32);
        }
        s = s.wrapping_add(a.__bindgen_anon_1.v_int);
    }
    *result = Any::from(s).into_raw();
    0
}

fn c_function(name: &std::ffi::CStr) -> Function {
    // SAFETY: a new reference (or NULL with an error) from ffk_function_new; no context.
    let p = unsafe { ffikit::sys::ffk_function_new(name.as_ptr(), Some(c_sum), std::ptr::null_mut(), None) };
    let o = unsafe { ObjectRef::from_raw(p.cast()) }.expect("ffk_function_new");
    Function::from_object(o).unwrap()
}

fn packed_sum(args: &[AnyView]) -> ffikit::Result<Any> {
    let mut s = 0i64;
    for a in args {
        s = s.wrapping_add(a.to::<i64>()?);
    }
    Ok(Any::from(s))
}

type Row = (String, Box<dyn Fn(i64) -> i64>);

/// `views!(k, i)`: k black-boxed int arguments, the first `i`, as an array of views.
macro_rules! views {
    (0, $i:expr) => {{
        let _ = $i;
        []
    }};
    (2, $i:expr) => {
        [AnyView::from(black_box($i)), AnyView::from(black_box(2i64))]
    };
    (8, $i:expr) => {
        [
            AnyView::from(black_box($i)),
            AnyView::from(black_box(2i64)),
            AnyView::from(black_box(3i64)),
            AnyView::from(black_box(4i64)),
            AnyView::from(black_box(5i64)),
            AnyView::from(black_box(6i64)),
            AnyView::from(black_box(7i64)),
            AnyView::from(black_box(8i64)),
        ]
    };
}

/// `tuple!(k, i)`: the same arguments as a tuple.
macro_rules! tuple {
    (0, $i:expr) => {{
        let _ = $i;
    }};
    (2, $i:expr) => {
        (black_box($i), black_box(2i64))
    };
    (8, $i:expr) => {
        (
            black_box($i),
            black_box(2i64),
            black_box(3i64),
            black_box(4i64),
            black_box(5i64),
            black_box(6i64),
            black_box(7i64),
            black_box(8i64),
        )
    };
}

/// The five rows for one argument count `$k`, with the baseline closure `$dyn_body` (taking
/// the arguments as `$tuple_pat`) and the typed closure over the same tuple type `$tt`.
macro_rules! rows_for {
    ($k:tt, $tt:ty, |$($p:ident),*| $body:expr) => {{
        let mut rows: Vec<Row> = Vec::new();
        let dyn_body = |$($p: i64),*| -> i64 { $body };
        rows.push((format!("dyn_{}", $k), Box::new(move |n| {
            let f: &dyn Fn($(ffk_i64!($p)),*) -> i64 = black_box(&dyn_body);
            let mut s = 0i64;
            for i in 0..n {
                #[allow(unused_variables)]
                let ($($p,)*) = tuple!($k, i);
                s = s.wrapping_add(f($($p),*));
            }
            s
        })));
        let closure = Function::from_packed(concat!("bench.closure_", $k), packed_sum).unwrap();
        rows.push((format!("closure_{}", $k), Box::new(move |n| {
            let mut s = 0i64;
            for i in 0..n {
                let r = closure.call(&views!($k, i)).unwrap();
                s = s.wrapping_add(i64::try_from(&r).unwrap());
            }
            s
        })));
        let cf = c_function(std::ffi::CStr::from_bytes_with_nul(concat!("bench.c_fn_", $k, "\0").as_bytes()).unwrap());
        rows.push((format!("c_fn_{}", $k), Box::new(move |n| {
            let mut s = 0i64;
            for i in 0..n {
                let r = cf.call(&views!($k, i)).unwrap();
                s = s.wrapping_add(i64::try_from(&r).unwrap());
            }
            s
        })));
        let typed = Function::from_typed(concat!("bench.typed_", $k), |($($p,)*): $tt| Ok::<i64, ffikit::Error>($body)).unwrap();
        let typed2 = typed.clone();
        rows.push((format!("typed_{}", $k), Box::new(move |n| {
            let mut s = 0i64;
            for i in 0..n {
                s = s.wrapping_add(typed.call_typed::<_, i64>(tuple!($k, i)).unwrap());
            }
            s
        })));
        rows.push((format!("typed_call_{}", $k), Box::new(move |n| {
            let mut s = 0i64;
            for i in 0..n {
                let r = typed2.call(&views!($k, i)).unwrap();
                s = s.wrapping_add(i64::try_from(&r).unwrap());
            }
            s
        })));
        rows
    }};
}

macro_rules! ffk_i64 {
    ($p:ident) => {
        i64
    };
}

fn rows() -> Vec<Row> {
    let mut rows = rows_for!(0, (), | | 0);
    rows.extend(rows_for!(2, (i64, i64), |a, b| a.wrapping_add(b)));
    rows.extend(rows_for!(8, (i64, i64, i64, i64, i64, i64, i64, i64), |a, b, c, d, e, f, g, h| {
        a.wrapping_add(b).wrapping_add(c).wrapping_add(d).wrapping_add(e).wrapping_add(f).wrapping_add(g).wrapping_add(h)
    }));
    rows
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows = rows();
    // Every row computes the same sums: check it once before timing anything.
    for (name, f) in &rows {
        let want = rows.iter().find(|(n, _)| n.starts_with("dyn_") && n.ends_with(&name[name.rfind('_').unwrap()..])).unwrap();
        assert_eq!(f(1000), (want.1)(1000), "row {} sums differently from its baseline", name);
    }
    if let Some(pos) = args.iter().position(|a| a == "--icount") {
        let (row, n) = (&args[pos + 1], args[pos + 2].parse::<i64>().expect("N"));
        let (_, f) = rows.iter().find(|(name, _)| name == row).unwrap_or_else(|| panic!("no row {}", row));
        black_box(f(n));
        return;
    }
    let wall = args.iter().any(|a| a == "--wall");
    let filter: Vec<&String> = args.iter().skip(1).filter(|a| !a.starts_with('-')).collect();
    let rows: Vec<&Row> = rows.iter().filter(|(n, _)| filter.iter().all(|f| n.contains(f.as_str()))).collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let clock = if wall { "wall time" } else { "thread CPU time" };
    println!("{} calls per run, {} interleaved rounds, {}; load before: {}", CALLS, ROUNDS, clock, load.trim());
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    for (_, f) in &rows {
        black_box(f(CALLS / 10)); // warm up
    }
    for _ in 0..ROUNDS {
        for (k, (_, f)) in rows.iter().enumerate() {
            ns[k].push(elapsed_ns(wall, || {
                black_box(f(CALLS));
            }) / CALLS as f64);
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load after: {}", load.trim());
    println!("{:<14} {:>9} {:>17} {:>11} {:>17} {:>7}", "row", "ns", "[min-max]", "excess ns", "excess [min-max]", "ratio");
    for (k, (name, _)) in rows.iter().enumerate() {
        let suffix = &name[name.rfind('_').unwrap()..];
        let base = rows.iter().position(|(n, _)| n.starts_with("dyn_") && n.ends_with(suffix));
        let mut v = ns[k].clone();
        let (lo, hi) = (v.iter().cloned().fold(f64::MAX, f64::min), v.iter().cloned().fold(0.0, f64::max));
        let m = median(&mut v);
        match base {
            Some(b) if b != k => {
                let mut ex: Vec<f64> = ns[k].iter().zip(&ns[b]).map(|(x, y)| x - y).collect();
                let (elo, ehi) = (ex.iter().cloned().fold(f64::MAX, f64::min), ex.iter().cloned().fold(f64::MIN, f64::max));
                let e = median(&mut ex);
                let mut bv = ns[b].clone();
                let bm = median(&mut bv);
                println!("{:<14} {:>9.2} {:>17} {:>+11.2} {:>17} {:>6.2}x", name, m, format!("[{:.2}-{:.2}]", lo, hi), e, format!("[{:+.2}, {:+.2}]", elo, ehi), m / bm);
            }
            _ => println!("{:<14} {:>9.2} {:>17}", name, m, format!("[{:.2}-{:.2}]", lo, hi)),
        }
    }
}
