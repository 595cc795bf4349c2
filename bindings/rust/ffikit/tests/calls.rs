//! The call path's fast paths and their fallbacks (issue 27): `call_typed` with its
//! arguments in a stack array (every arity up to 8) and through the `Vec` of an `Args`
//! that keeps the default `with_views`, references released on every path, the cold
//! failure paths of the closure trampoline (an `Err`, a panic, a wrong arity), and the
//! result of a call that fails left as None.
mod common;
use common::testing;
use ffikit::{Any, AnyView, Args, Array, Element, Error, Function, ObjectType, Result, Str};

#[test]
fn call_typed_passes_every_arity_up_to_eight() {
    let f = Function::from_packed("rs.calls.sum", |args: &[AnyView]| {
        let mut s = 0i64;
        for (i, a) in args.iter().enumerate() {
            s += (i as i64 + 1) * a.to::<i64>()?;
        }
        Ok(Any::from(s))
    })
    .unwrap();
    assert_eq!(f.call_typed::<_, i64>(()).unwrap(), 0);
    assert_eq!(f.call_typed::<_, i64>((1i64,)).unwrap(), 1);
    assert_eq!(f.call_typed::<_, i64>((1i64, 1i64)).unwrap(), 3);
    assert_eq!(f.call_typed::<_, i64>((1i64, 1i64, 1i64)).unwrap(), 6);
    assert_eq!(f.call_typed::<_, i64>((1i64, 1i64, 1i64, 1i64)).unwrap(), 10);
    assert_eq!(f.call_typed::<_, i64>((1i64, 1i64, 1i64, 1i64, 1i64)).unwrap(), 15);
    assert_eq!(f.call_typed::<_, i64>((1i64, 1i64, 1i64, 1i64, 1i64, 1i64)).unwrap(), 21);
    assert_eq!(f.call_typed::<_, i64>((1i64, 1i64, 1i64, 1i64, 1i64, 1i64, 1i64)).unwrap(), 28);
    // The order is kept: argument i is weighted i + 1.
    assert_eq!(f.call_typed::<_, i64>((1i64, 0i64, 0i64, 0i64, 0i64, 0i64, 0i64, 2i64)).unwrap(), 17);
}

#[test]
fn typed_functions_of_eight_parameters_check_and_convert_like_c() {
    type Eight = (i64, i64, i64, i64, i64, i64, i64, f64);
    let f = Function::from_typed("rs.calls.eight", |(a, b, c, d, e, g, h, x): Eight| Ok((a + b + c + d + e + g + h) as f64 * x)).unwrap();
    assert_eq!(
        f.signature().unwrap(),
        "rs.calls.eight(0: int, 1: int, 2: int, 3: int, 4: int, 5: int, 6: int, 7: float) -> float"
    );
    assert_eq!(f.call_typed::<_, f64>((1i64, 2i64, 3i64, 4i64, 5i64, 6i64, 7i64, 0.5)).unwrap(), 14.0);
    // C converts the int 2 for the float parameter.
    assert_eq!(f.call_typed::<_, f64>((1i64, 1i64, 1i64, 1i64, 1i64, 1i64, 1i64, 2i64)).unwrap(), 14.0);
    let e = f.call_typed::<_, f64>((1i64, 1i64, 1i64, "x".to_string(), 1i64, 1i64, 1i64, 2.0)).unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert!(e.message().contains("argument #3"), "{}", e.message());
    let e = f.call_typed::<_, f64>((1i64, 1i64)).unwrap_err();
    assert!(e.message().starts_with("Mismatched number of arguments"), "{}", e.message());
}

#[test]
fn call_typed_holds_one_reference_per_object_argument_and_releases_it() {
    let s = Str::new("a string long enough to be an object").unwrap();
    let a: Array<i64> = vec![1, 2].into();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let f = Function::from_packed("rs.calls.counts", move |args: &[AnyView]| {
        let counts: Vec<u32> = args.iter().map(|v| v.to_object().unwrap().use_count()).collect();
        seen2.lock().unwrap().push(counts);
        Ok(Any::none())
    })
    .unwrap();
    let (s0, a0) = (s.use_count(), a.use_count());
    f.call_typed::<_, ()>((s.clone(), a.clone())).unwrap();
    // During the call: our handle, the argument's, and the to_object handle in the closure.
    assert_eq!(seen.lock().unwrap()[0], vec![s0 + 2, a0 + 2]);
    assert_eq!((s.use_count(), a.use_count()), (s0, a0), "the arguments' references are released");
    // The same when the call fails.
    let g = Function::from_packed("rs.calls.fails", |_| Err(Error::new("ValueError", "refused"))).unwrap();
    let e = g.call_typed::<_, ()>((s.clone(), a.clone())).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: refused");
    assert_eq!((s.use_count(), a.use_count()), (s0, a0));
    // And when the result does not convert to the type asked for.
    let e = f.call_typed::<_, i64>((s.clone(), a.clone())).unwrap_err();
    assert_eq!(e.to_string(), "TypeError: expected int but got None");
    assert_eq!((s.use_count(), a.use_count()), (s0, a0));
}

/// An element whose conversion always fails, to stop `with_views` half way.
#[derive(Clone)]
struct Refuses;
impl Element for Refuses {
    fn schema() -> String {
        "Refuses".into()
    }
    fn into_any(self) -> Result<Any> {
        Err(Error::new("ValueError", "Refuses cannot be converted"))
    }
    fn from_view(_: &ffikit::sys::ffk_any) -> Result<Self> {
        Ok(Refuses)
    }
}

#[test]
fn a_failed_argument_conversion_releases_the_values_made_before_it_and_calls_nothing() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let f = Function::from_packed("rs.calls.never", move |_| {
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Any::none())
    })
    .unwrap();
    let s = Str::new("another string long enough to be an object").unwrap();
    let s0 = s.use_count();
    let e = f.call_typed::<_, ()>((s.clone(), Refuses, s.clone())).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: Refuses cannot be converted");
    assert_eq!(s.use_count(), s0, "the first argument's reference is released, the third's dropped unconverted");
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 0);
}

/// An `Args` that keeps the default `with_views` (through `into_anys`' Vec).
struct Pair(i64, Str);
impl Args for Pair {
    fn schema() -> String {
        "(int, str)".into()
    }
    fn from_views(args: &[AnyView<'_>]) -> Result<Self> {
        Ok(Pair(args[0].to()?, args[1].to()?))
    }
    fn into_anys(self) -> Result<Vec<Any>> {
        Ok(vec![self.0.into_any()?, self.1.into_any()?])
    }
}

#[test]
fn an_args_type_of_its_own_goes_through_the_default_with_views() {
    let f = Function::from_typed("rs.calls.pair", |Pair(n, s): Pair| Ok(format!("{}{}", s.as_str(), n))).unwrap();
    assert_eq!(f.signature().unwrap(), "rs.calls.pair(0: int, 1: str) -> str");
    let s = Str::new("a long string object, the prefix: ").unwrap();
    let s0 = s.use_count();
    assert_eq!(f.call_typed::<_, String>(Pair(7, s.clone())).unwrap(), "a long string object, the prefix: 7");
    assert_eq!(s.use_count(), s0);
}

#[test]
fn a_typed_closure_given_the_wrong_arity_directly_is_a_type_error() {
    // C checks the arity before a typed Function's closure runs; the tuple's own check
    // (out of line, cold) answers only a direct caller.
    let e = <(i64, i64) as Args>::from_views(&[AnyView::from(1i64)]).err().unwrap();
    assert_eq!(e.to_string(), "TypeError: expected 2 arguments but got 1");
    let e = <() as Args>::from_views(&[AnyView::from(1i64)]).err().unwrap();
    assert_eq!(e.to_string(), "TypeError: expected 0 arguments but got 1");
}

#[test]
fn trampoline_failures_reach_every_caller_and_leave_the_result_none() {
    // Rust -> C (testing.apply) -> Rust: the Err and the panic take the cold paths.
    let err = Error::new("mylib.Refused", "no");
    let e2 = err.clone();
    let fails = Function::from_packed("rs.calls.err", move |_| Err(e2.clone())).unwrap();
    let back = testing("apply").call(&[AnyView::from(&fails)]).unwrap_err();
    assert!(back.is(&err));
    let panics = Function::from_packed("rs.calls.panic", |_| panic!("{} went wrong", 42)).unwrap();
    let e = testing("apply").call(&[AnyView::from(&panics)]).unwrap_err();
    assert_eq!(e.to_string(), "RuntimeError: Rust function `rs.calls.panic` panicked: 42 went wrong");
    let panics_with_value = Function::from_packed("rs.calls.panic_any", |_| std::panic::panic_any(7u8)).unwrap();
    let e = panics_with_value.call(&[]).unwrap_err();
    assert_eq!(e.to_string(), "RuntimeError: Rust function `rs.calls.panic_any` panicked: a panic");
    // The raw convention: -1 and the result None.
    let mut out = Any::from(5i64).into_raw();
    let rc = unsafe { ffikit::sys::ffk_function_call(fails.as_object().as_ptr().cast(), std::ptr::null(), 0, &mut out) };
    assert_eq!(rc, -1);
    assert_eq!(out.type_index, 0, "None");
    let raised = unsafe { ffikit::ObjectRef::from_raw(ffikit::sys::ffk_error_fetch().cast()) }.unwrap();
    assert!(raised.downcast::<Error>().unwrap().is(&err));
    // And the thread's slot is empty again: the next call succeeds.
    let ok = Function::from_typed("rs.calls.ok", |(): ()| Ok(1i64)).unwrap();
    assert_eq!(ok.call_typed::<_, i64>(()).unwrap(), 1);
}
