//! `Function` (packed calls, Rust closures as Functions, typed signatures), the global
//! registry, `Module::load`, and the macros that make a Rust `cdylib` an ffikit module.
use crate::any::{none_raw, Any, AnyView, Element};
use crate::error::{check, check_ptr, cstring, Error, Result};
use crate::object::{object_handle, ObjectRef};
use crate::sys;
use std::ffi::{c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

object_handle!(
    /// A Function object: any callable of C, Python or Rust behind the packed calling
    /// convention. Immutable, so `Send + Sync`; closures wrapped in one must be
    /// `Send + Sync` too, since any thread (of any language) may call it.
    ///
    /// ```
    /// use ffikit::{Any, AnyView, Function};
    /// let add = Function::from_packed("add", |args: &[AnyView]| {
    ///     Ok(Any::from(args[0].to::<i64>()? + args[1].to::<i64>()?))
    /// }).unwrap();
    /// let r = add.call(&[AnyView::from(2i64), AnyView::from(3i64)]).unwrap();
    /// assert_eq!(i64::try_from(&r).unwrap(), 5);
    /// let e = add.call(&[AnyView::from(2i64), AnyView::from(0.5)]).unwrap_err();
    /// assert_eq!(e.to_string(), "TypeError: expected int but got float");
    /// ```
    Function, FFK_TYPE_FUNCTION, "Function"
);

/// Runs a Rust packed callback for C: the result goes to `*result`; an `Err` goes into
/// the thread's error slot as the very Error object; a panic becomes a RuntimeError.
///
/// The success path is the closure's own code plus two stores: the failure paths
/// (`raise`, `raise_panic`) are out of line and cold, so the frame around the closure
/// stays small. `catch_unwind` costs nothing until a panic unwinds.
#[doc(hidden)]
#[inline]
pub unsafe fn __call_packed<F>(name: &str, f: &F, args: *const sys::ffk_any, nargs: i32, result: *mut sys::ffk_any) -> i32
where
    F: Fn(&[AnyView<'_>]) -> Result<Any>,
{
    run_packed(f, || name, args, nargs, result)
}

/// `__call_packed` with the name fetched only when a panic needs it (a closure's name lives
/// beside it in its context: the success path then keeps one pointer, not the name).
#[inline(always)]
unsafe fn run_packed<'n, F>(f: &F, name: impl FnOnce() -> &'n str, args: *const sys::ffk_any, nargs: i32, result: *mut sys::ffk_any) -> i32
where
    F: Fn(&[AnyView<'_>]) -> Result<Any>,
{
    let args = AnyView::slice_from_raw(args, nargs.max(0) as usize);
    match catch_unwind(AssertUnwindSafe(|| f(args))) {
        Ok(Ok(v)) => {
            *result = v.into_raw();
            0
        }
        Ok(Err(e)) => raise(e),
        Err(panic) => raise_panic(name(), panic),
    }
}

/// A callback's `Err`: into the thread's error slot, as the same object; -1.
#[cold]
#[inline(never)]
fn raise(e: Error) -> i32 {
    e.restore();
    -1
}

/// A callback's panic: a RuntimeError naming the function and the panic's message; -1.
#[cold]
#[inline(never)]
fn raise_panic(name: &str, panic: Box<dyn std::any::Any + Send>) -> i32 {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    Error::new("RuntimeError", &format!("Rust function `{}` panicked: {}", name, msg)).restore();
    -1
}

/// The Error a failed C call left in the thread's slot (out of line: only failures pay).
#[cold]
#[inline(never)]
fn call_failed() -> Error {
    Error::fetch()
}

/// A typed Function's closure got a different number of arguments than its signature
/// declares (C checks the arity first, so only a direct `__call_packed` can see this).
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn __arity_error(expected: usize, got: usize) -> Error {
    Error::new("TypeError", &format!("expected {} arguments but got {}", expected, got))
}

struct Closure<F> {
    name: String,
    f: F,
}

unsafe extern "C" fn trampoline<F>(ctx: *mut c_void, args: *const sys::ffk_any, nargs: i32, result: *mut sys::ffk_any) -> i32
where
    F: Fn(&[AnyView<'_>]) -> Result<Any>,
{
    let c = &*(ctx as *const Closure<F>);
    run_packed(&c.f, || c.name.as_str(), args, nargs, result)
}

unsafe extern "C" fn drop_closure<F>(ctx: *mut c_void) {
    drop(Box::from_raw(ctx as *mut Closure<F>));
}

/// Argument lists of typed Functions: tuples of `Element`s.
pub trait Args: Sized {
    /// The parameter list of the signature: "(int, str)".
    fn schema() -> String;
    /// Converts the borrowed arguments (C already checked them against the signature).
    fn from_views(args: &[AnyView<'_>]) -> Result<Self>;
    /// Owned values to pass.
    fn into_anys(self) -> Result<Vec<Any>>;
    /// Converts to owned values and calls `f` with views of them; the values are released
    /// after `f` returns. The tuples keep them in an array on the stack, so a call
    /// allocates nothing; this default goes through `into_anys`.
    #[doc(hidden)]
    #[inline]
    fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> Result<T> {
        let anys = self.into_anys()?;
        // SAFETY: Any and AnyView are both repr(transparent) over ffk_any, and the views
        // borrow `anys`, which outlives `f`.
        Ok(f(unsafe { std::slice::from_raw_parts(anys.as_ptr().cast(), anys.len()) }))
    }
}

macro_rules! one {
    ($x:tt) => {
        1
    };
}

macro_rules! tuple_args {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Element),*> Args for ($($t,)*) {
            fn schema() -> String {
                let names: Vec<String> = vec![$($t::schema()),*];
                format!("({})", names.join(", "))
            }
            #[allow(unused_variables)]
            #[inline]
            fn from_views(args: &[AnyView<'_>]) -> Result<Self> {
                const N: usize = 0 $(+ one!($i))*;
                if args.len() != N {
                    return Err(__arity_error(N, args.len()));
                }
                Ok(($(args[$i].to::<$t>()?,)*))
            }
            fn into_anys(self) -> Result<Vec<Any>> {
                Ok(vec![$(self.$i.into_any()?),*])
            }
            #[inline]
            fn with_views<T>(self, f: impl FnOnce(&[AnyView<'_>]) -> T) -> Result<T> {
                // On an Err from a later conversion, the values made so far are dropped.
                let anys: [Any; 0 $(+ one!($i))*] = [$(self.$i.into_any()?),*];
                // SAFETY: Any and AnyView are both repr(transparent) over ffk_any, and the
                // views borrow `anys`, which outlives `f`.
                Ok(f(unsafe { std::slice::from_raw_parts(anys.as_ptr().cast(), anys.len()) }))
            }
        }
    };
}
tuple_args!();
tuple_args!(A 0);
tuple_args!(A 0, B 1);
tuple_args!(A 0, B 1, C 2);
tuple_args!(A 0, B 1, C 2, D 3);
tuple_args!(A 0, B 1, C 2, D 3, E 4);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

impl Function {
    fn raw(&self) -> *mut sys::ffk_function {
        self.0.as_ptr().cast()
    }

    /// A Function calling `f` with the borrowed arguments. An `Err` from `f` reaches the
    /// caller (in any language) as that same Error; a panic becomes a RuntimeError.
    pub fn from_packed<F>(name: &str, f: F) -> Result<Function>
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any> + Send + Sync + 'static,
    {
        Self::make(name, None, f)
    }

    /// A typed Function: C checks and converts the arguments and the result against the
    /// signature built from `A` and `R` (`(int, int) -> int`), with C's messages.
    ///
    /// ```
    /// use ffikit::{AnyView, Function};
    /// let add = Function::from_typed("add", |(a, b): (i64, i64)| Ok(a + b)).unwrap();
    /// assert_eq!(add.signature().unwrap(), "add(0: int, 1: int) -> int");
    /// assert_eq!(add.call_typed::<_, i64>((2i64, 3i64)).unwrap(), 5);
    /// let e = add.call(&[AnyView::from(1i64)]).unwrap_err();
    /// assert!(e.message().starts_with("Mismatched number of arguments"));
    /// ```
    pub fn from_typed<A, R, F>(name: &str, f: F) -> Result<Function>
    where
        A: Args,
        R: Element,
        F: Fn(A) -> Result<R> + Send + Sync + 'static,
    {
        let sig = format!("{} -> {}", A::schema(), R::schema());
        Self::make(name, Some(&sig), move |args: &[AnyView<'_>]| f(A::from_views(args)?)?.into_any())
    }

    fn make<F>(name: &str, sig: Option<&str>, f: F) -> Result<Function>
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any> + Send + Sync + 'static,
    {
        let cname = cstring(name)?;
        let csig = sig.map(cstring).transpose()?;
        let ctx = Box::into_raw(Box::new(Closure { name: name.to_string(), f })) as *mut c_void;
        // SAFETY: C calls drop_closure exactly once, also when creation fails.
        let p = unsafe {
            match &csig {
                Some(s) => sys::ffk_function_new_typed(cname.as_ptr(), s.as_ptr(), Some(trampoline::<F>), ctx, Some(drop_closure::<F>)),
                None => sys::ffk_function_new(cname.as_ptr(), Some(trampoline::<F>), ctx, Some(drop_closure::<F>)),
            }
        };
        check_ptr(p).map(Function)
    }

    /// Calls with borrowed arguments.
    ///
    /// ```
    /// use ffikit::{Any, AnyView, Function};
    /// let f = Function::from_packed("count", |args: &[AnyView]| Ok(Any::from(args.len() as i64))).unwrap();
    /// assert_eq!(f.call(&[AnyView::from(1i64), AnyView::from(true)]).unwrap().to::<i64>().unwrap(), 2);
    /// ```
    #[inline]
    pub fn call(&self, args: &[AnyView<'_>]) -> Result<Any> {
        let mut out = none_raw();
        // SAFETY: AnyView is repr(transparent) over ffk_any; out receives an owned value.
        let rc = unsafe { sys::ffk_function_call(self.raw(), args.as_ptr().cast(), args.len() as i32, &mut out) };
        if rc == 0 {
            Ok(Any(out))
        } else {
            Err(call_failed())
        }
    }

    /// Calls with positional arguments and keyword arguments `(name, value)`, as Python's
    /// `f(xs, k=2.0)`. C binds the keywords to the parameter names of a typed Function's
    /// signature with Python's rules and `TypeError` texts ("scale() got an unexpected
    /// keyword argument 'q'", "... missing 1 required positional argument: 'k'"), then
    /// converts and calls exactly as `call` does. An untyped Function, or one whose
    /// signature names no parameter, "takes no keyword arguments". With no keywords this is
    /// `call`. A name with a NUL byte is a `ValueError`.
    ///
    /// ```
    /// use ffikit::{Any, AnyView, Function};
    /// let f = Function::from_packed("doc.count", |args: &[AnyView]| Ok(Any::from(args.len() as i64))).unwrap();
    /// let e = f.call_kw(&[], &[("x", AnyView::from(1i64))]).unwrap_err();
    /// assert_eq!(e.to_string(), "TypeError: doc.count() takes no keyword arguments");
    /// ```
    pub fn call_kw(&self, args: &[AnyView<'_>], kwargs: &[(&str, AnyView<'_>)]) -> Result<Any> {
        if kwargs.is_empty() {
            return self.call(args);
        }
        let names = kwargs.iter().map(|(name, _)| cstring(name)).collect::<Result<Vec<_>>>()?;
        let name_ptrs: Vec<*const std::os::raw::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut all: Vec<AnyView<'_>> = Vec::with_capacity(args.len() + kwargs.len());
        all.extend_from_slice(args);
        all.extend(kwargs.iter().map(|(_, v)| *v));
        let mut out = none_raw();
        // SAFETY: AnyView is repr(transparent) over ffk_any; the names live until the call
        // returns; out receives an owned value.
        let rc = unsafe {
            sys::ffk_function_call_kw(
                self.raw(),
                all.as_ptr().cast(),
                args.len() as i32,
                name_ptrs.as_ptr(),
                kwargs.len() as i32,
                &mut out,
            )
        };
        if rc == 0 {
            Ok(Any(out))
        } else {
            Err(Error::fetch())
        }
    }

    /// The parameter names of a typed Function's signature, one per parameter (`None` for
    /// a parameter written without a name, which only a positional argument can fill);
    /// `None` for an untyped Function.
    ///
    /// ```
    /// let f = ffikit::Function::from_typed("doc.id", |(x,): (i64,)| Ok(x)).unwrap();
    /// assert_eq!(f.param_names(), Some(vec![None]));
    /// ```
    pub fn param_names(&self) -> Option<Vec<Option<String>>> {
        // SAFETY: plain reads of the live Function.
        let n = unsafe { sys::ffk_function_num_params(self.raw()) };
        if n < 0 {
            return None;
        }
        let names = (0..n)
            .map(|i| {
                let mut p = std::ptr::null();
                // SAFETY: i is in range, so this returns 1 (a name borrowed from the live
                // Function) or 0 (no name) and raises nothing.
                match unsafe { sys::ffk_function_param_name(self.raw(), i, &mut p) } {
                    1 => Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()),
                    _ => None,
                }
            })
            .collect();
        Some(names)
    }

    /// Calls with a tuple of Rust values and converts the result to `R`. The arguments
    /// live on the stack for the call (no allocation); C converts them to a typed
    /// Function's parameter types, exactly as for `call`.
    ///
    /// ```
    /// let f = ffikit::Function::from_typed("doc.sum3", |(a, b, c): (i64, i64, f64)| Ok(a as f64 + b as f64 + c)).unwrap();
    /// assert_eq!(f.call_typed::<_, f64>((1i64, 2i64, 0.5)).unwrap(), 3.5);
    /// let e = f.call_typed::<_, f64>((1i64, "two".to_string(), 0.5)).unwrap_err();
    /// assert_eq!(e.kind(), "TypeError");
    /// ```
    #[inline]
    pub fn call_typed<A: Args, R: Element>(&self, args: A) -> Result<R> {
        args.with_views(|views| self.call(views))??.to::<R>()
    }

    /// The name given at creation.
    ///
    /// ```
    /// let f = ffikit::Function::from_typed("doc.id", |(x,): (i64,)| Ok(x)).unwrap();
    /// assert_eq!(f.name(), "doc.id");
    /// ```
    pub fn name(&self) -> String {
        // SAFETY: borrowed from the live Function.
        unsafe { CStr::from_ptr(sys::ffk_function_name(self.raw())) }.to_string_lossy().into_owned()
    }

    /// The signature of a typed Function as messages print it; `None` when untyped.
    pub fn signature(&self) -> Option<String> {
        // SAFETY: borrowed from the live Function, or NULL.
        let p = unsafe { sys::ffk_function_signature(self.raw()) };
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// C's `FFK_FUNCTION_QUICK`: the Function returns quickly and never waits on Python
    /// (no callback into Python, no lock or thread another thread releases, no blocking
    /// I/O), so the Python binding keeps the GIL around its calls. A promise the author
    /// makes; a quick Function that waits on a thread calling back into Python deadlocks.
    pub const QUICK: u32 = sys::FFK_FUNCTION_QUICK;

    /// Replaces the Function's flags (`Function::QUICK`, or 0 to clear them). Set them
    /// before sharing the Function (before `register_global` or a clone): C's ValueError
    /// for a shared Function, and for bits C does not know. C's `ffk_function_set_flags`.
    ///
    /// ```
    /// use ffikit::Function;
    /// let f = Function::from_typed("doc.quick", |(x,): (i64,)| Ok(x + 1)).unwrap();
    /// f.set_flags(Function::QUICK).unwrap();
    /// assert_eq!(f.flags(), Function::QUICK);
    /// let shared = f.clone();
    /// assert!(f.set_flags(0).is_err()); // shared now: the flags are fixed
    /// drop(shared);
    /// ```
    pub fn set_flags(&self, flags: u32) -> Result<()> {
        // SAFETY: a live Function; C checks that nobody else holds it.
        check(unsafe { sys::ffk_function_set_flags(self.raw(), flags) })
    }

    /// The Function's flags (`Function::QUICK` or 0). C's `ffk_function_flags`.
    pub fn flags(&self) -> u32 {
        // SAFETY: reads a field of the live Function.
        unsafe { sys::ffk_function_flags(self.raw()) }
    }

    /// Registers this Function under `name` in the global registry (replacing an existing
    /// one only when `replace`; otherwise C's RuntimeError "Global Function `name` is
    /// already registered", tvm_ffi's text).
    ///
    /// ```
    /// use ffikit::{Any, Function};
    /// let f = Function::from_typed("doc.twice", |(x,): (i64,)| Ok(2 * x)).unwrap();
    /// f.register_global("doc.twice", false).unwrap();
    /// let g = Function::get_global("doc.twice").unwrap().unwrap();
    /// assert_eq!(g.call_typed::<_, i64>((21i64,)).unwrap(), 42);
    /// assert!(Function::list_global_names().unwrap().contains(&"doc.twice".to_string()));
    /// assert!(Function::remove_global("doc.twice").unwrap());
    /// assert!(Function::get_global("doc.twice").unwrap().is_none());
    /// ```
    pub fn register_global(&self, name: &str, replace: bool) -> Result<()> {
        let name = cstring(name)?;
        // SAFETY: the registry takes its own reference.
        check(unsafe { sys::ffk_function_register(name.as_ptr(), self.raw(), replace) })
    }

    /// The name under which this very Function is registered in the global registry: its
    /// own [`name`](Function::name) when the registry maps that name to it, else the first
    /// name in name order that does; `None` when no name maps to it (an anonymous closure,
    /// one removed or replaced by another). Identity, not equality: a Function made the
    /// same way but not registered has no global name. A pickle-time cost (it may visit
    /// every registered name), not a call-time one. C's `ffk_function_global_name`.
    ///
    /// ```
    /// use ffikit::Function;
    /// let f = Function::from_typed("doc.gname", |(x,): (i64,)| Ok(x)).unwrap();
    /// assert_eq!(f.global_name().unwrap(), None);
    /// f.register_global("doc.gname.alias", false).unwrap();
    /// assert_eq!(f.global_name().unwrap().as_deref(), Some("doc.gname.alias"));
    /// Function::remove_global("doc.gname.alias").unwrap();
    /// ```
    pub fn global_name(&self) -> Result<Option<String>> {
        let mut out = none_raw();
        // SAFETY: a live Function; out receives an owned str (or None).
        let rc = unsafe { sys::ffk_function_global_name(self.raw(), &mut out) };
        let out = Any(out);
        match rc {
            1 => Ok(Some(out.to::<String>()?)),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Looks a global Function up.
    pub fn get_global(name: &str) -> Result<Option<Function>> {
        let name = cstring(name)?;
        let mut out = std::ptr::null_mut();
        // SAFETY: out receives a new reference when found.
        match unsafe { sys::ffk_function_get_global(name.as_ptr(), &mut out) } {
            1 => Ok(Some(Function(unsafe { ObjectRef::from_raw(out.cast()) }.unwrap()))),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Removes a global Function; true when it was registered.
    pub fn remove_global(name: &str) -> Result<bool> {
        let name = cstring(name)?;
        // SAFETY: plain call.
        match unsafe { sys::ffk_function_remove_global(name.as_ptr()) } {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(Error::fetch()),
        }
    }

    /// The names of every global Function, in name order.
    pub fn list_global_names() -> Result<Vec<String>> {
        unsafe extern "C" fn collect(name: *const std::os::raw::c_char, _f: *mut sys::ffk_function, ctx: *mut c_void) -> i32 {
            let v = &mut *(ctx as *mut Vec<String>);
            v.push(CStr::from_ptr(name).to_string_lossy().into_owned());
            0
        }
        let mut names = Vec::new();
        // SAFETY: ctx is our Vec, used only during the call.
        let rc = unsafe { sys::ffk_function_for_each_global(Some(collect), &mut names as *mut Vec<String> as *mut c_void) };
        if rc < 0 {
            return Err(Error::fetch());
        }
        Ok(names)
    }
}

object_handle!(
    /// A loaded module: a shared library of Functions (see `export_function!`).
    Module, FFK_TYPE_MODULE, "Module"
);

impl Module {
    /// Loads the shared library at `path` (runs its init entry the first time).
    ///
    /// ```
    /// let e = ffikit::Module::load("/no/such/module.so").unwrap_err();
    /// assert_eq!(e.kind(), "RuntimeError");
    /// ```
    pub fn load(path: &str) -> Result<Module> {
        let p = cstring(path)?;
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_module_load(p.as_ptr()) }).map(Module)
    }

    /// The Function the module exports as `name` (typed when it exports a signature).
    pub fn get_function(&self, name: &str) -> Result<Function> {
        let n = cstring(name)?;
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_module_get_function(self.0.as_ptr().cast(), n.as_ptr()) }).map(Function)
    }

    /// Keeps the module's library loaded for the life of the process, even after this
    /// Module and every Function taken from it are dropped (`ffk_module_keep_loaded`): for a
    /// library whose code may still run through objects or callbacks it made. A library
    /// whose init entry ran is kept already.
    pub fn keep_loaded(&self) -> Result<()> {
        // SAFETY: the live Module; the call only sets a flag under the loader's lock.
        check(unsafe { sys::ffk_module_keep_loaded(self.0.as_ptr().cast()) })
    }

    /// The path it was loaded from.
    pub fn path(&self) -> String {
        // SAFETY: borrowed from the live Module.
        unsafe { CStr::from_ptr(sys::ffk_module_path(self.0.as_ptr().cast())) }.to_string_lossy().into_owned()
    }
}

/// A signature string exported by `export_function!` (a `const char *const` for C).
#[doc(hidden)]
#[repr(transparent)]
pub struct Signature(pub *const std::os::raw::c_char);
// SAFETY: points at an immutable static string.
unsafe impl Sync for Signature {}

#[doc(hidden)]
pub unsafe fn __module_init(m: *mut sys::ffk_module, f: fn(&Module) -> Result<()>) -> i32 {
    let module = Module(ObjectRef::from_borrowed(m.cast()));
    __call_packed("ffikit_module_init", &|_: &[AnyView<'_>]| f(&module).map(|()| Any::none()), std::ptr::null(), 0, &mut none_raw())
}

/// Writes the `ffikit_abi_version` symbol that makes a `cdylib` an ffikit module. Use
/// once per library, with `export_function!` for each Function.
#[macro_export]
macro_rules! module_abi_version {
    () => {
        #[no_mangle]
        pub static ffikit_abi_version: u32 = $crate::sys::FFK_ABI_VERSION;
    };
}

/// Exports a packed Rust function `fn(&[AnyView]) -> Result<Any>` as the module function
/// `name` (symbol `ffikit_fn_<name>`), optionally with a signature that makes it typed
/// (`ffikit_sig_<name>`).
///
/// ```
/// use ffikit::{Any, AnyView, Result};
/// ffikit::module_abi_version!();
/// fn add(args: &[AnyView]) -> Result<Any> {
///     Ok(Any::from(args[0].to::<i64>()? + args[1].to::<i64>()?))
/// }
/// ffikit::export_function!(add, "(int, int) -> int", add);
/// ```
#[macro_export]
macro_rules! export_function {
    ($name:ident, $f:expr) => {
        const _: () = {
            #[export_name = concat!("ffikit_fn_", stringify!($name))]
            pub unsafe extern "C" fn __ffikit_export(
                _self: *mut ::std::os::raw::c_void,
                args: *const $crate::sys::ffk_any,
                nargs: i32,
                result: *mut $crate::sys::ffk_any,
            ) -> i32 {
                $crate::function::__call_packed(stringify!($name), &$f, args, nargs, result)
            }
        };
    };
    ($name:ident, $sig:literal, $f:expr) => {
        $crate::export_function!($name, $f);
        const _: () = {
            #[export_name = concat!("ffikit_sig_", stringify!($name))]
            pub static __FFIKIT_SIG: $crate::function::Signature =
                $crate::function::Signature(concat!($sig, "\0").as_ptr() as *const ::std::os::raw::c_char);
        };
    };
}

/// Declares the module's init entry: `module_init!(init)` with `fn init(m: &Module) -> Result<()>`,
/// run once per process when the library is first loaded (typically to register globals).
#[macro_export]
macro_rules! module_init {
    ($f:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn ffikit_module_init(m: *mut $crate::sys::ffk_module) -> i32 {
            $crate::function::__module_init(m, $f)
        }
    };
}
