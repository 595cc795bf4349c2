//! `Any` (an owned ffk_any), `AnyView<'a>` (a borrowed one), `Kind` (the kind as a Rust
//! enum for `match`), and `Element`, the trait of every type a typed container holds.
//!
//! Conversions back from a value use the C accessors, so the rules and the error texts
//! are C's: an `int` accepts a bool, a `float` accepts an int, a mismatch is a TypeError
//! "expected int but got str".
use crate::error::{check, Error, Result};
use crate::object::{repr_of, structural_eq, structural_hash, ObjectRef, ObjectType};
use crate::sys;
use std::ffi::CStr;
use std::fmt;
use std::marker::PhantomData;

/// The kind of a value, for `match`. Inline and object strings are both `Str`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// None.
    None,
    /// An `i64`.
    Int,
    /// A bool.
    Bool,
    /// An `f64`.
    Float,
    /// An opaque pointer.
    Ptr,
    /// A DLPack data type.
    DataType,
    /// A DLPack device.
    Device,
    /// A borrowed `DLTensor*` view (call arguments only).
    DLTensorPtr,
    /// A str (inline, object or C-string view).
    Str,
    /// Bytes (inline, object or view).
    Bytes,
    /// An Error object.
    Error,
    /// A Function.
    Function,
    /// A Shape.
    Shape,
    /// A Tensor.
    Tensor,
    /// An Array.
    Array,
    /// A Tuple.
    Tuple,
    /// A Map.
    Map,
    /// A Module.
    Module,
    /// A foreign object (such as a Python object).
    Opaque,
    /// A List.
    List,
    /// A Dict.
    Dict,
    /// Any other object type (its type index).
    Object(i32),
}

fn kind_of(v: &sys::ffk_any) -> Kind {
    use sys::ffk_type_index as t;
    let i = v.type_index;
    let is = |x: t| i == x.0 as i32;
    if is(t::FFK_TYPE_NONE) {
        Kind::None
    } else if is(t::FFK_TYPE_INT) {
        Kind::Int
    } else if is(t::FFK_TYPE_BOOL) {
        Kind::Bool
    } else if is(t::FFK_TYPE_FLOAT) {
        Kind::Float
    } else if is(t::FFK_TYPE_OPAQUE_PTR) {
        Kind::Ptr
    } else if is(t::FFK_TYPE_DATATYPE) {
        Kind::DataType
    } else if is(t::FFK_TYPE_DEVICE) {
        Kind::Device
    } else if is(t::FFK_TYPE_DLTENSOR_PTR) {
        Kind::DLTensorPtr
    } else if is(t::FFK_TYPE_RAW_STR) || is(t::FFK_TYPE_SMALL_STR) || is(t::FFK_TYPE_STRING) {
        Kind::Str
    } else if is(t::FFK_TYPE_BYTE_ARRAY_PTR) || is(t::FFK_TYPE_SMALL_BYTES) || is(t::FFK_TYPE_BYTES) {
        Kind::Bytes
    } else if is(t::FFK_TYPE_ERROR) {
        Kind::Error
    } else if is(t::FFK_TYPE_FUNCTION) {
        Kind::Function
    } else if is(t::FFK_TYPE_SHAPE) {
        Kind::Shape
    } else if is(t::FFK_TYPE_TENSOR) {
        Kind::Tensor
    } else if is(t::FFK_TYPE_ARRAY) {
        Kind::Array
    } else if is(t::FFK_TYPE_TUPLE) {
        Kind::Tuple
    } else if is(t::FFK_TYPE_MAP) {
        Kind::Map
    } else if is(t::FFK_TYPE_MODULE) {
        Kind::Module
    } else if is(t::FFK_TYPE_OPAQUE) {
        Kind::Opaque
    } else if is(t::FFK_TYPE_LIST) {
        Kind::List
    } else if is(t::FFK_TYPE_DICT) {
        Kind::Dict
    } else {
        Kind::Object(i)
    }
}

pub(crate) const INT: i32 = sys::ffk_type_index::FFK_TYPE_INT.0 as i32;
pub(crate) const BOOL: i32 = sys::ffk_type_index::FFK_TYPE_BOOL.0 as i32;
pub(crate) const FLOAT: i32 = sys::ffk_type_index::FFK_TYPE_FLOAT.0 as i32;
pub(crate) const OBJECT_BEGIN: i32 = sys::ffk_type_index::FFK_TYPE_OBJECT_BEGIN.0 as i32;

#[inline]
pub(crate) fn none_raw() -> sys::ffk_any {
    sys::ffk_any { type_index: 0, aux: 0, __bindgen_anon_1: sys::ffk_any__bindgen_ty_1 { v_int: 0 } }
}
#[inline]
pub(crate) fn int_raw(x: i64) -> sys::ffk_any {
    sys::ffk_any { type_index: INT, aux: 0, __bindgen_anon_1: sys::ffk_any__bindgen_ty_1 { v_int: x } }
}

/// An owned value: the 16-byte tagged `ffk_any`. Holding an object, it owns one
/// reference (`Clone` retains, `Drop` releases).
///
/// ```
/// use ffikit::{Any, Kind};
/// let v = Any::from(42i64);
/// assert_eq!(v.kind(), Kind::Int);
/// assert_eq!(i64::try_from(&v).unwrap(), 42);
/// assert_eq!(f64::try_from(&v).unwrap(), 42.0); // C's rule: an int is a float
/// let e = String::try_from(&v).unwrap_err();
/// assert_eq!(e.to_string(), "TypeError: expected str but got int");
/// assert_eq!(Any::from("hi").to_string(), "\"hi\"");
/// ```
#[repr(transparent)]
pub struct Any(pub(crate) sys::ffk_any);

/// A borrowed value: plain data, or a view of an object or string that `'a` keeps alive.
/// Arguments of a Function call are `AnyView`s.
///
/// ```
/// use ffikit::{Any, AnyView};
/// let owned = Any::from("a long string, not inline");
/// let args = [AnyView::from(1i64), owned.view(), AnyView::from(2.5)];
/// assert_eq!(args[1].as_str().unwrap(), "a long string, not inline");
/// assert_eq!(args[2].to_any().to_string(), "2.5");
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct AnyView<'a>(pub(crate) sys::ffk_any, PhantomData<&'a ()>);

// SAFETY: see ObjectRef; a value is plain data or an object handle.
unsafe impl Send for Any {}
unsafe impl Sync for Any {}
unsafe impl Send for AnyView<'_> {}
unsafe impl Sync for AnyView<'_> {}

impl Any {
    /// None.
    ///
    /// ```
    /// assert!(ffikit::Any::none().is_none());
    /// ```
    pub fn none() -> Any {
        Any(none_raw())
    }

    /// Takes over an owned raw value.
    ///
    /// # Safety
    /// `v` must be a valid owned value (not a view), whose ownership the caller gives up.
    pub unsafe fn from_raw(v: sys::ffk_any) -> Any {
        Any(v)
    }

    /// Gives up ownership of the raw value.
    #[inline]
    pub fn into_raw(self) -> sys::ffk_any {
        let v = self.0;
        std::mem::forget(self);
        v
    }

    /// The raw value, borrowed.
    pub fn as_raw(&self) -> &sys::ffk_any {
        &self.0
    }

    /// A borrowed view.
    ///
    /// ```
    /// let v = ffikit::Any::from(1.5);
    /// assert_eq!(v.view().to::<f64>().unwrap(), 1.5);
    /// ```
    #[inline]
    pub fn view(&self) -> AnyView<'_> {
        AnyView(self.0, PhantomData)
    }

    /// A value holding `o` (takes over the handle's reference).
    ///
    /// ```
    /// let s = ffikit::Str::new("an object string").unwrap();
    /// let v = ffikit::Any::from_object(s.into());
    /// assert_eq!(v.kind(), ffikit::Kind::Str);
    /// ```
    pub fn from_object(o: ObjectRef) -> Any {
        // SAFETY: ffk_any_object_steal takes over the reference.
        Any(unsafe { sys::ffk_any_object_steal(o.into_raw()) })
    }

    /// A str value (inline when at most 7 bytes). Fails only when out of memory.
    ///
    /// ```
    /// assert_eq!(ffikit::Any::str("abc").unwrap().as_str().unwrap(), "abc");
    /// ```
    pub fn str(s: &str) -> Result<Any> {
        let mut out = none_raw();
        // SAFETY: data/size describe a valid UTF-8 buffer.
        check(unsafe { sys::ffk_any_str(s.as_ptr().cast(), s.len(), &mut out) })?;
        Ok(Any(out))
    }

    /// A bytes value (inline when at most 7 bytes). Fails only when out of memory.
    ///
    /// ```
    /// assert_eq!(ffikit::Any::bytes(b"\x00\x01").unwrap().as_bytes().unwrap(), b"\x00\x01");
    /// ```
    pub fn bytes(b: &[u8]) -> Result<Any> {
        let mut out = none_raw();
        // SAFETY: data/size describe a valid buffer.
        check(unsafe { sys::ffk_any_bytes(b.as_ptr().cast(), b.len(), &mut out) })?;
        Ok(Any(out))
    }

    /// Converts to `T` with C's rules (`Any::try_into` does the same).
    #[inline]
    pub fn to<T: Element>(&self) -> Result<T> {
        T::from_view(&self.0)
    }
}

impl<'a> AnyView<'a> {
    /// A view of a raw value.
    ///
    /// # Safety
    /// `v` must stay valid (and its object alive) for `'a`.
    pub unsafe fn from_raw(v: sys::ffk_any) -> AnyView<'a> {
        AnyView(v, PhantomData)
    }

    /// A view of an object.
    pub fn from_object(o: &'a ObjectRef) -> AnyView<'a> {
        let mut v = none_raw();
        v.type_index = o.type_index();
        v.__bindgen_anon_1.v_obj = o.as_ptr();
        AnyView(v, PhantomData)
    }

    /// A view of a NUL-terminated string (no copy).
    ///
    /// ```
    /// let c = std::ffi::CString::new("view").unwrap();
    /// assert_eq!(ffikit::AnyView::from_cstr(&c).as_str().unwrap(), "view");
    /// ```
    pub fn from_cstr(s: &'a CStr) -> AnyView<'a> {
        // SAFETY: a raw-str view of memory that 'a keeps alive.
        AnyView(unsafe { sys::ffk_any_raw_str(s.as_ptr()) }, PhantomData)
    }

    /// The raw value, borrowed.
    pub fn as_raw(&self) -> &sys::ffk_any {
        &self.0
    }

    /// An owned copy (objects retained, string views copied into str values).
    ///
    /// ```
    /// let c = std::ffi::CString::new("copied into a String object").unwrap();
    /// let owned = ffikit::AnyView::from_cstr(&c).to_any();
    /// drop(c);
    /// assert_eq!(owned.as_str().unwrap(), "copied into a String object");
    /// ```
    pub fn to_any(&self) -> Any {
        let mut out = none_raw();
        // SAFETY: a valid value; only a DLTensor* view or OOM can fail.
        if unsafe { sys::ffk_any_to_owned(&self.0, &mut out) } != 0 {
            panic!("cannot own this value: {}", Error::fetch());
        }
        Any(out)
    }

    /// Converts to `T` with C's rules.
    #[inline]
    pub fn to<T: Element>(&self) -> Result<T> {
        T::from_view(&self.0)
    }

    /// A slice of raw values as views.
    ///
    /// # Safety
    /// The values must stay valid for `'a`.
    #[inline]
    pub unsafe fn slice_from_raw(args: *const sys::ffk_any, n: usize) -> &'a [AnyView<'a>] {
        if n == 0 {
            return &[];
        }
        std::slice::from_raw_parts(args.cast(), n)
    }
}

/// Accessors shared by `Any` and `AnyView`.
macro_rules! accessors {
    ($t:ty) => {
        impl $t {
            /// The kind, for `match`.
            pub fn kind(&self) -> Kind {
                kind_of(&self.0)
            }
            /// The raw type index.
            pub fn type_index(&self) -> i32 {
                self.0.type_index
            }
            /// The user-facing type name ("int", "str", "Array").
            pub fn type_name(&self) -> &'static str {
                // SAFETY: names are static.
                unsafe { CStr::from_ptr(sys::ffk_any_type_name(&self.0)) }.to_str().unwrap_or("?")
            }
            /// True for None.
            pub fn is_none(&self) -> bool {
                self.0.type_index == 0
            }
            /// The text of a str value, borrowed from `self`.
            pub fn as_str(&self) -> Result<&str> {
                let (mut data, mut size) = (std::ptr::null(), 0usize);
                // SAFETY: data stays valid while self holds the value unchanged.
                check(unsafe { sys::ffk_any_as_str(&self.0, &mut data, &mut size) })?;
                let b = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
                // SAFETY: C guarantees str values are valid UTF-8.
                Ok(unsafe { std::str::from_utf8_unchecked(b) })
            }
            /// The bytes of a bytes value, borrowed from `self`.
            pub fn as_bytes(&self) -> Result<&[u8]> {
                let (mut data, mut size) = (std::ptr::null(), 0usize);
                // SAFETY: as for as_str.
                check(unsafe { sys::ffk_any_as_bytes(&self.0, &mut data, &mut size) })?;
                if size == 0 {
                    return Ok(&[]);
                }
                Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) })
            }
            /// The object held, as a new handle (TypeError for plain values).
            pub fn to_object(&self) -> Result<ObjectRef> {
                let mut out = std::ptr::null_mut();
                let any = sys::ffk_type_index::FFK_TYPE_OBJECT.0 as i32;
                // SAFETY: out receives a new reference.
                check(unsafe { sys::ffk_any_as_object(&self.0, any, &mut out) })?;
                Ok(unsafe { ObjectRef::from_raw(out) }.unwrap())
            }
        }
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&repr_of(&self.0))
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&repr_of(&self.0))
            }
        }
    };
}
accessors!(Any);
accessors!(AnyView<'_>);

impl Clone for Any {
    fn clone(&self) -> Any {
        // SAFETY: the copy gets its own reference.
        unsafe { sys::ffk_any_retain(&self.0) };
        Any(self.0)
    }
}

impl Drop for Any {
    #[inline]
    fn drop(&mut self) {
        if self.0.type_index >= OBJECT_BEGIN {
            // SAFETY: we own the value.
            unsafe { sys::ffk_any_release(&mut self.0) }
        }
    }
}

impl Default for Any {
    fn default() -> Any {
        Any::none()
    }
}

/// Structural equality (C's `ffk_structural_equal`): containers by content, 1 != true != 1.0.
impl PartialEq for Any {
    fn eq(&self, other: &Any) -> bool {
        structural_eq(&self.0, &other.0)
    }
}
impl Eq for Any {}
impl std::hash::Hash for Any {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(structural_hash(&self.0))
    }
}

impl<'a> From<&'a Any> for AnyView<'a> {
    #[inline]
    fn from(a: &'a Any) -> AnyView<'a> {
        a.view()
    }
}

macro_rules! pod_from {
    ($t:ty, $f:expr) => {
        impl From<$t> for Any {
            #[inline]
            fn from(x: $t) -> Any {
                #[allow(clippy::redundant_closure_call, unused_unsafe)]
                Any(unsafe { $f(x) })
            }
        }
        impl From<$t> for AnyView<'static> {
            #[inline]
            fn from(x: $t) -> AnyView<'static> {
                #[allow(clippy::redundant_closure_call, unused_unsafe)]
                AnyView(unsafe { $f(x) }, PhantomData)
            }
        }
    };
}
pod_from!(i64, int_raw);
pod_from!(i32, |x: i32| int_raw(x as i64));
pod_from!(bool, |x| sys::ffk_any_bool(x));
pod_from!(f64, |x| sys::ffk_any_float(x));
pod_from!(crate::DataType, |x: crate::DataType| sys::ffk_any_dtype(x.0));
pod_from!(crate::Device, |x: crate::Device| sys::ffk_any_device(x.0));

impl From<()> for Any {
    fn from(_: ()) -> Any {
        Any::none()
    }
}
impl From<&str> for Any {
    /// Panics only when out of memory, as Rust's own allocations do.
    fn from(s: &str) -> Any {
        Any::str(s).expect("out of memory making a str")
    }
}
impl From<String> for Any {
    fn from(s: String) -> Any {
        Any::from(s.as_str())
    }
}
impl From<&[u8]> for Any {
    fn from(b: &[u8]) -> Any {
        Any::bytes(b).expect("out of memory making bytes")
    }
}
impl<T: ObjectType> From<&T> for Any {
    fn from(o: &T) -> Any {
        Any::from_object(o.as_object().clone())
    }
}
impl<'a, T: ObjectType> From<&'a T> for AnyView<'a> {
    fn from(o: &'a T) -> AnyView<'a> {
        AnyView::from_object(o.as_object())
    }
}

/// A type a value converts to and from, with C's rules: what typed containers hold and
/// typed Functions take.
///
/// ```
/// use ffikit::{Any, Element};
/// assert_eq!(i64::schema(), "int");
/// let v = 7i64.into_any().unwrap();
/// assert_eq!(i64::from_view(v.as_raw()).unwrap(), 7);
/// ```
pub trait Element: Sized + Clone {
    /// The type's name in a signature (`"int"`, `"Array<str>"`).
    fn schema() -> String;
    /// An owned value.
    fn into_any(self) -> Result<Any>;
    /// Converts a borrowed value (a TypeError naming both types on mismatch).
    fn from_view(v: &sys::ffk_any) -> Result<Self>;
    /// Whether `from_view` would succeed (used to check a container's elements once).
    fn accepts(v: &sys::ffk_any) -> bool {
        Self::from_view(v).is_ok()
    }
    /// `from_view` for a value already known to pass `accepts` (a typed Array's or Map's
    /// element): lets the hot loops skip the tag test where the payload alone suffices.
    #[doc(hidden)]
    #[inline]
    fn from_accepted(v: &sys::ffk_any) -> Self {
        Self::from_view(v).expect("a value of the checked type")
    }
}

impl Element for Any {
    fn schema() -> String {
        "Any".into()
    }
    fn into_any(self) -> Result<Any> {
        Ok(self)
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        // SAFETY: a borrowed valid value.
        Ok(unsafe { AnyView::from_raw(*v) }.to_any())
    }
    fn accepts(_: &sys::ffk_any) -> bool {
        true
    }
}

/// `()` is None: what a typed Function that returns nothing declares (`-> None`).
impl Element for () {
    fn schema() -> String {
        "None".into()
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::none())
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        if v.type_index == 0 {
            Ok(())
        } else {
            Err(crate::object::type_error("None", v))
        }
    }
}

impl Element for i64 {
    fn schema() -> String {
        "int".into()
    }
    #[inline]
    fn into_any(self) -> Result<Any> {
        Ok(Any(int_raw(self)))
    }
    #[inline]
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        if v.type_index == INT {
            // SAFETY: the tag says the payload is v_int.
            return Ok(unsafe { v.__bindgen_anon_1.v_int });
        }
        let mut out = 0;
        // SAFETY: valid value.
        check(unsafe { sys::ffk_any_as_int(v, &mut out) })?;
        Ok(out)
    }
    fn accepts(v: &sys::ffk_any) -> bool {
        v.type_index == INT || v.type_index == BOOL
    }
    #[inline]
    fn from_accepted(v: &sys::ffk_any) -> Self {
        // SAFETY: an accepted value is an Int or a Bool, both stored in v_int (Bool as 0/1).
        unsafe { v.__bindgen_anon_1.v_int }
    }
}

impl Element for f64 {
    fn schema() -> String {
        "float".into()
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self))
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        let mut out = 0.0;
        // SAFETY: valid value.
        check(unsafe { sys::ffk_any_as_float(v, &mut out) })?;
        Ok(out)
    }
    fn accepts(v: &sys::ffk_any) -> bool {
        v.type_index == INT || v.type_index == BOOL || v.type_index == FLOAT
    }
}

impl Element for bool {
    fn schema() -> String {
        "bool".into()
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from(self))
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        let mut out = false;
        // SAFETY: valid value.
        check(unsafe { sys::ffk_any_as_bool(v, &mut out) })?;
        Ok(out)
    }
    fn accepts(v: &sys::ffk_any) -> bool {
        v.type_index == INT || v.type_index == BOOL
    }
}

impl Element for String {
    fn schema() -> String {
        "str".into()
    }
    fn into_any(self) -> Result<Any> {
        Any::str(&self)
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        // SAFETY: a borrowed valid value.
        let view = unsafe { AnyView::from_raw(*v) };
        view.as_str().map(str::to_owned)
    }
}

impl Element for Vec<u8> {
    fn schema() -> String {
        "bytes".into()
    }
    fn into_any(self) -> Result<Any> {
        Any::bytes(&self)
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        // SAFETY: a borrowed valid value.
        let view = unsafe { AnyView::from_raw(*v) };
        view.as_bytes().map(<[u8]>::to_vec)
    }
}

/// `Element` for a plain DLPack struct read back through its C accessor.
macro_rules! dlpack_element {
    ($t:ident, $raw:ident, $schema:expr, $accessor:ident) => {
        impl Element for crate::$t {
            fn schema() -> String {
                $schema.into()
            }
            fn into_any(self) -> Result<Any> {
                Ok(Any::from(self))
            }
            fn from_view(v: &sys::ffk_any) -> Result<Self> {
                let mut out = sys::$raw::default();
                // SAFETY: a valid value and an out parameter of the accessor's type.
                check(unsafe { sys::$accessor(v, &mut out) })?;
                Ok(crate::$t(out))
            }
        }
    };
}
dlpack_element!(DataType, DLDataType, "dtype", ffk_any_as_dtype);
dlpack_element!(Device, DLDevice, "Device", ffk_any_as_device);

impl<T: ObjectType> Element for T {
    fn schema() -> String {
        T::schema()
    }
    fn into_any(self) -> Result<Any> {
        Ok(Any::from_object(self.into_object()))
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        T::from_value(v)
    }
    fn accepts(v: &sys::ffk_any) -> bool {
        T::accepts_value(v)
    }
}

/// `Option<T>` is `Optional<T>`: `None` is None, `Some(x)` is `x`'s value. A value that is
/// neither None nor a `T` is `T`'s TypeError.
///
/// ```
/// use ffikit::{Any, Element, Str};
/// assert_eq!(<Option<Str> as Element>::schema(), "Optional<str>");
/// assert_eq!(Any::none().to::<Option<i64>>().unwrap(), None);
/// assert_eq!(Any::from(3i64).to::<Option<i64>>().unwrap(), Some(3));
/// assert!(Any::from("x").to::<Option<i64>>().is_err());
/// ```
impl<T: Element> Element for Option<T> {
    fn schema() -> String {
        format!("Optional<{}>", T::schema())
    }
    fn into_any(self) -> Result<Any> {
        match self {
            Some(x) => x.into_any(),
            None => Ok(Any::none()),
        }
    }
    fn from_view(v: &sys::ffk_any) -> Result<Self> {
        if v.type_index == sys::ffk_type_index::FFK_TYPE_NONE.0 as i32 {
            return Ok(None);
        }
        T::from_view(v).map(Some)
    }
    fn accepts(v: &sys::ffk_any) -> bool {
        v.type_index == sys::ffk_type_index::FFK_TYPE_NONE.0 as i32 || T::accepts(v)
    }
}

macro_rules! try_from_any {
    ($($t:ty),*) => {$(
        impl TryFrom<&Any> for $t {
            type Error = Error;
            #[inline]
            fn try_from(v: &Any) -> Result<$t> {
                <$t as Element>::from_view(&v.0)
            }
        }
        impl TryFrom<Any> for $t {
            type Error = Error;
            #[inline]
            fn try_from(v: Any) -> Result<$t> {
                <$t as Element>::from_view(&v.0)
            }
        }
        impl TryFrom<AnyView<'_>> for $t {
            type Error = Error;
            #[inline]
            fn try_from(v: AnyView<'_>) -> Result<$t> {
                <$t as Element>::from_view(&v.0)
            }
        }
    )*};
}
try_from_any!(i64, f64, bool, String, Vec<u8>, crate::DataType, crate::Device);

/// The values of `iter` as owned values, all converted before anything is given to C;
/// the first conversion error is returned (and the values made so far released).
pub(crate) fn owned_values<T: Element>(iter: impl IntoIterator<Item = T>) -> Result<Vec<Any>> {
    iter.into_iter().map(T::into_any).collect()
}

/// Feeds the values of `iter` to `sink` as owned values, 256 at a time, so bulk inserts
/// make one C call (one lock, one growth check) per chunk instead of one per value.
/// Stops at the first error; chunks already given stay given.
pub(crate) fn in_chunks<T: Element>(iter: impl Iterator<Item = T>, mut sink: impl FnMut(&[Any]) -> Result<()>) -> Result<()> {
    const CHUNK: usize = 256;
    let mut buf: Vec<Any> = Vec::with_capacity(iter.size_hint().0.clamp(1, CHUNK));
    for v in iter {
        buf.push(v.into_any()?);
        if buf.len() == CHUNK {
            sink(&buf)?;
            buf.clear();
        }
    }
    if buf.is_empty() {
        Ok(())
    } else {
        sink(&buf)
    }
}
