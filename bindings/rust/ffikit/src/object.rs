//! `ObjectRef`, the untyped owning handle to an ffikit object, and the typed handles'
//! shared machinery: `Clone` retains, `Drop` releases, downcasts are checked with the C
//! type registry, `Debug`/`Display` print the C repr, `PartialEq`/`Hash` are the C
//! structural ones (by content for containers and strings, by identity otherwise).
use crate::any::AnyView;
use crate::error::{Error, Result};
use crate::sys;
use std::ffi::CStr;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ptr::NonNull;

/// An owning handle to any ffikit object (one strong reference).
///
/// ```
/// use ffikit::{ObjectRef, Str};
/// let s = Str::new("a string longer than seven bytes").unwrap();
/// let o: ObjectRef = s.clone().into();
/// assert_eq!(o.type_name(), "str");
/// assert_eq!(o.use_count(), 2);
/// let back: Str = o.downcast().unwrap();
/// assert_eq!(back.as_str(), "a string longer than seven bytes");
/// ```
#[repr(transparent)]
pub struct ObjectRef(NonNull<sys::ffk_object>);

// SAFETY: reference counts are atomic, and every ffikit object type is either immutable
// once shared (Str, Bytes, Shape, Array, Tuple, Map, Function, Module, Error, Tensor
// metadata) or locks each operation (List, Dict). The safe API never hands out the
// refcount word or a pointer that outlives its owner. See the crate docs' table.
unsafe impl Send for ObjectRef {}
unsafe impl Sync for ObjectRef {}

impl ObjectRef {
    /// Takes over a new reference; `None` for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or a live object whose one strong reference the caller gives up.
    pub unsafe fn from_raw(p: *mut sys::ffk_object) -> Option<ObjectRef> {
        NonNull::new(p).map(ObjectRef)
    }

    /// Retains a borrowed object.
    ///
    /// # Safety
    /// `p` must be a live object.
    pub unsafe fn from_borrowed(p: *mut sys::ffk_object) -> ObjectRef {
        sys::ffk_object_retain(p);
        ObjectRef(NonNull::new_unchecked(p))
    }

    /// The object pointer, borrowed from `self`.
    pub fn as_ptr(&self) -> *mut sys::ffk_object {
        self.0.as_ptr()
    }

    /// Gives up the reference without releasing it.
    pub fn into_raw(self) -> *mut sys::ffk_object {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }

    /// Points the handle at `p` without releasing the old pointer: for C copy-on-write
    /// mutators, which leave the (possibly moved or copied) handle at the address given.
    ///
    /// # Safety
    /// `p` must be a live object whose reference replaces the one this handle held.
    pub(crate) unsafe fn set_raw(&mut self, p: *mut sys::ffk_object) {
        self.0 = NonNull::new(p).expect("C left a NULL handle");
    }

    /// The object's type index.
    pub fn type_index(&self) -> i32 {
        // SAFETY: the header's type_index is immutable after creation.
        unsafe { (*self.as_ptr()).type_index }
    }

    /// The type's short name (`"Array"`, `"str"`, `"mylib.Point"`).
    ///
    /// ```
    /// let o: ffikit::ObjectRef = ffikit::Array::<i64>::new().unwrap().into();
    /// assert_eq!(o.type_name(), "Array");
    /// ```
    pub fn type_name(&self) -> String {
        // SAFETY: names are static in the registry.
        unsafe { CStr::from_ptr(sys::ffk_type_name(self.type_index())) }.to_string_lossy().into_owned()
    }

    /// The strong count (a snapshot).
    pub fn use_count(&self) -> u32 {
        // SAFETY: live object; the count is read atomically by C.
        unsafe { sys::ffk_object_use_count(self.as_ptr()) }
    }

    /// True when this handle is the only reference.
    ///
    /// ```
    /// let a: ffikit::ObjectRef = ffikit::List::<i64>::new().unwrap().into();
    /// assert!(a.is_unique());
    /// let b = a.clone();
    /// assert!(!a.is_unique());
    /// drop(b);
    /// ```
    pub fn is_unique(&self) -> bool {
        // SAFETY: live object.
        unsafe { sys::ffk_object_is_unique(self.as_ptr()) }
    }

    /// True when the object is an instance of `type_index` (or a subtype).
    pub fn is_instance(&self, type_index: i32) -> bool {
        // SAFETY: live object.
        unsafe { sys::ffk_object_is_instance(self.as_ptr(), type_index) }
    }

    /// A checked downcast to a typed handle (a TypeError "expected Array but got Map"
    /// otherwise; for `Array<T>`, `Map<K, V>`... every element is checked too).
    pub fn downcast<T: ObjectType>(self) -> Result<T> {
        T::from_object(self)
    }

    /// Whether two handles point at the same object.
    ///
    /// ```
    /// let a: ffikit::ObjectRef = ffikit::List::<i64>::new().unwrap().into();
    /// assert!(a.ptr_eq(&a.clone()));
    /// ```
    pub fn ptr_eq(&self, other: &ObjectRef) -> bool {
        self.0 == other.0
    }

    /// A borrowed view of the object as a value.
    pub fn view(&self) -> AnyView<'_> {
        AnyView::from_object(self)
    }
}

impl Clone for ObjectRef {
    fn clone(&self) -> ObjectRef {
        // SAFETY: we hold a reference, so the object is alive.
        unsafe { sys::ffk_object_retain(self.as_ptr()) };
        ObjectRef(self.0)
    }
}

impl Drop for ObjectRef {
    fn drop(&mut self) {
        // SAFETY: we own one strong reference.
        unsafe { sys::ffk_object_release(self.as_ptr()) }
    }
}

/// The text of `v` as C prints it (`(1, 2)`, `"text"`, `float32[2]@cpu:0`).
pub(crate) fn repr_of(v: &sys::ffk_any) -> String {
    // SAFETY: v is a valid value; the result is a new String object reference or NULL.
    let s = unsafe { sys::ffk_any_repr(v) };
    if s.is_null() {
        let e = Error::fetch();
        return format!("<repr failed: {}>", e);
    }
    // SAFETY: s is a live String object, released right after the copy.
    unsafe {
        let text = crate::string::string_bytes(s);
        let out = String::from_utf8_lossy(text).into_owned();
        sys::ffk_object_release(s.cast());
        out
    }
}

/// Structural equality of two values (C's `ffk_structural_equal`), for `PartialEq`, which
/// cannot return an error: one (values nested deeper than `FFK_STRUCTURAL_MAX_DEPTH`, an
/// allocation failure, a hook's error) panics with C's message, as `RefCell`'s `==` panics
/// rather than answer wrongly. Reading it as "unequal" would make a deep value unequal to
/// its own clone. [`crate::structural_eq`] returns the error instead.
pub(crate) fn structural_eq(a: &sys::ffk_any, b: &sys::ffk_any) -> bool {
    // SAFETY: valid borrowed values.
    match unsafe { sys::ffk_structural_equal(a, b) } {
        1 => true,
        0 => false,
        _ => panic!("ffikit: `==` failed: {} (ffikit::structural_eq returns the error)", Error::fetch()),
    }
}

/// Structural hash of a value (C's `ffk_structural_hash`), for `Hash`; an error panics as
/// in [`structural_eq`] ([`crate::structural_hash`] returns it instead).
pub(crate) fn structural_hash(v: &sys::ffk_any) -> u64 {
    let mut h = 0u64;
    // SAFETY: valid borrowed value.
    if unsafe { sys::ffk_structural_hash(v, &mut h) } != 0 {
        panic!("ffikit: hashing failed: {} (ffikit::structural_hash returns the error)", Error::fetch());
    }
    h
}

/// A typed object handle: `Str`, `Array<T>`, `Dict<K, V>`, ... (and `ObjectRef` itself).
///
/// # Safety
/// Implementors are `#[repr(transparent)]` over `ObjectRef`, and `from_object` accepts
/// only objects of the handle's kind whose elements satisfy the handle's element types.
pub unsafe trait ObjectType: Sized + Clone {
    /// The type index the handle accepts (and its subtypes).
    const TYPE_INDEX: i32;
    /// The name in a typed Function's signature (`"Array<int>"`).
    fn schema() -> String;
    /// The checked downcast.
    fn from_object(o: ObjectRef) -> Result<Self>;
    /// The untyped handle.
    fn as_object(&self) -> &ObjectRef;
    /// Gives up the typed view.
    fn into_object(self) -> ObjectRef;
    /// Converts a borrowed value: an object of the handle's kind (checked as `from_object`
    /// does), else C's TypeError "expected Array but got int". `Str` and `Bytes` also take
    /// the forms a short string or bytes value has without an object (at most 7 bytes
    /// stored in the value itself, or a borrowed C string), and make an object for them.
    fn from_value(v: &sys::ffk_any) -> Result<Self> {
        object_from_value(v)
    }
    /// Whether `from_value` would succeed.
    fn accepts_value(v: &sys::ffk_any) -> bool {
        Self::from_value(v).is_ok()
    }
}

/// `ObjectType::from_value` for a value that must hold an object of `T`'s kind.
pub(crate) fn object_from_value<T: ObjectType>(v: &sys::ffk_any) -> Result<T> {
    if v.type_index < crate::any::OBJECT_BEGIN {
        return Err(type_error(&T::schema(), v));
    }
    // SAFETY: the tag says v_obj is a live object borrowed from v.
    let o = unsafe { ObjectRef::from_borrowed(v.__bindgen_anon_1.v_obj) };
    T::from_object(o)
}

/// The TypeError C's accessors raise, "expected Array but got Map".
pub(crate) fn type_error(expected: &str, got: &sys::ffk_any) -> Error {
    // SAFETY: type names are static.
    let got = unsafe { CStr::from_ptr(sys::ffk_any_type_name(got)) }.to_string_lossy();
    Error::new("TypeError", &format!("expected {} but got {}", expected, got))
}

/// Downcast check shared by the handles: instance of `index`, else C's TypeError text.
pub(crate) fn expect_instance(o: &ObjectRef, index: i32) -> Result<()> {
    if o.is_instance(index) {
        return Ok(());
    }
    let mut out: *mut sys::ffk_object = std::ptr::null_mut();
    let v = o.view();
    // SAFETY: ffk_any_as_object raises the library's own TypeError text for us.
    let rc = unsafe { sys::ffk_any_as_object(v.as_raw(), index, &mut out) };
    debug_assert!(rc != 0);
    if rc == 0 {
        // SAFETY: a new reference we do not need.
        unsafe { sys::ffk_object_release(out) };
        return Ok(());
    }
    Err(Error::fetch())
}

unsafe impl ObjectType for ObjectRef {
    const TYPE_INDEX: i32 = sys::ffk_type_index::FFK_TYPE_OBJECT.0 as i32;
    fn schema() -> String {
        "Object".into()
    }
    fn from_object(o: ObjectRef) -> Result<Self> {
        Ok(o)
    }
    fn as_object(&self) -> &ObjectRef {
        self
    }
    fn into_object(self) -> ObjectRef {
        self
    }
}

impl fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&repr_of(self.view().as_raw()))
    }
}
impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&repr_of(self.view().as_raw()))
    }
}
impl PartialEq for ObjectRef {
    fn eq(&self, other: &ObjectRef) -> bool {
        structural_eq(self.view().as_raw(), other.view().as_raw())
    }
}
impl Hash for ObjectRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(structural_hash(self.view().as_raw()))
    }
}

/// Declares a typed handle over `ObjectRef` with the common impls.
macro_rules! object_handle {
    ($(#[$m:meta])* $name:ident, $index:ident, $schema:expr) => {
        $crate::object::object_handle!($(#[$m])* $name, $index, $schema,
            from_value = $crate::object::object_from_value::<$name>,
            accepts_value = |v| <$name as $crate::object::ObjectType>::from_value(v).is_ok());
    };
    ($(#[$m:meta])* $name:ident, $index:ident, $schema:expr,
     from_value = $from_value:expr, accepts_value = $accepts_value:expr) => {
        $(#[$m])*
        #[derive(Clone)]
        #[repr(transparent)]
        pub struct $name(pub(crate) $crate::object::ObjectRef);

        unsafe impl $crate::object::ObjectType for $name {
            const TYPE_INDEX: i32 = $crate::sys::ffk_type_index::$index.0 as i32;
            fn schema() -> String {
                $schema.into()
            }
            fn from_object(o: $crate::object::ObjectRef) -> $crate::Result<Self> {
                $crate::object::expect_instance(&o, Self::TYPE_INDEX)?;
                Ok($name(o))
            }
            fn as_object(&self) -> &$crate::object::ObjectRef {
                &self.0
            }
            fn into_object(self) -> $crate::object::ObjectRef {
                self.0
            }
            fn from_value(v: &$crate::sys::ffk_any) -> $crate::Result<Self> {
                ($from_value)(v)
            }
            fn accepts_value(v: &$crate::sys::ffk_any) -> bool {
                #[allow(clippy::redundant_closure_call)]
                ($accepts_value)(v)
            }
        }
        $crate::object::handle_common!($name);
    };
}
pub(crate) use object_handle;

/// `Debug`/`Display` (C repr), `PartialEq`/`Eq`/`Hash` (structural), and conversions.
macro_rules! handle_common {
    ($name:ident $(<$($g:ident),*>)?) => {
        impl$(<$($g: $crate::any::Element),*>)? std::fmt::Debug for $name$(<$($g),*>)? {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt($crate::object::ObjectType::as_object(self), f)
            }
        }
        impl$(<$($g: $crate::any::Element),*>)? std::fmt::Display for $name$(<$($g),*>)? {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt($crate::object::ObjectType::as_object(self), f)
            }
        }
        impl$(<$($g: $crate::any::Element),*>)? PartialEq for $name$(<$($g),*>)? {
            fn eq(&self, other: &Self) -> bool {
                $crate::object::ObjectType::as_object(self) == $crate::object::ObjectType::as_object(other)
            }
        }
        impl$(<$($g: $crate::any::Element),*>)? Eq for $name$(<$($g),*>)? {}
        impl$(<$($g: $crate::any::Element),*>)? std::hash::Hash for $name$(<$($g),*>)? {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                $crate::object::ObjectType::as_object(self).hash(state)
            }
        }
        impl$(<$($g: $crate::any::Element),*>)? From<$name$(<$($g),*>)?> for $crate::object::ObjectRef {
            fn from(h: $name$(<$($g),*>)?) -> $crate::object::ObjectRef {
                $crate::object::ObjectType::into_object(h)
            }
        }
        impl$(<$($g: $crate::any::Element),*>)? TryFrom<$crate::object::ObjectRef> for $name$(<$($g),*>)? {
            type Error = $crate::Error;
            fn try_from(o: $crate::object::ObjectRef) -> $crate::Result<Self> {
                <Self as $crate::object::ObjectType>::from_object(o)
            }
        }
        impl$(<$($g: $crate::any::Element),*>)? $name$(<$($g),*>)? {
            /// The strong count of the object (a snapshot).
            pub fn use_count(&self) -> u32 {
                $crate::object::ObjectType::as_object(self).use_count()
            }
            /// Whether two handles point at the same object.
            pub fn ptr_eq(&self, other: &Self) -> bool {
                $crate::object::ObjectType::as_object(self).ptr_eq($crate::object::ObjectType::as_object(other))
            }
        }
    };
}
pub(crate) use handle_common;


/// `FromIterator`, `Extend` and `From<Vec<_>>` for a sequence (`seq`), plus `From<HashMap>`
/// and `From<BTreeMap>` for a mapping (`map`), all through `new()` and `try_extend`.
/// They panic only when out of memory, as std's collections do.
macro_rules! collection_impls {
    (seq $name:ident) => {
        impl<T: $crate::any::Element> FromIterator<T> for $name<T> {
            fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
                #[allow(unused_mut)]
                let mut c = $name::new().expect("out of memory");
                c.try_extend(iter).expect("out of memory");
                c
            }
        }
        impl<T: $crate::any::Element> Extend<T> for $name<T> {
            fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
                self.try_extend(iter).expect("out of memory")
            }
        }
        impl<T: $crate::any::Element> From<Vec<T>> for $name<T> {
            fn from(v: Vec<T>) -> Self {
                v.into_iter().collect()
            }
        }
    };
    (map $name:ident) => {
        impl<K: $crate::any::Element, V: $crate::any::Element> FromIterator<(K, V)> for $name<K, V> {
            fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
                #[allow(unused_mut)]
                let mut c = $name::new().expect("out of memory");
                c.try_extend(iter).expect("out of memory");
                c
            }
        }
        impl<K: $crate::any::Element, V: $crate::any::Element> Extend<(K, V)> for $name<K, V> {
            fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
                self.try_extend(iter).expect("out of memory")
            }
        }
        impl<K: $crate::any::Element, V: $crate::any::Element> From<Vec<(K, V)>> for $name<K, V> {
            fn from(v: Vec<(K, V)>) -> Self {
                v.into_iter().collect()
            }
        }
        impl<K: $crate::any::Element, V: $crate::any::Element> From<std::collections::HashMap<K, V>> for $name<K, V> {
            fn from(h: std::collections::HashMap<K, V>) -> Self {
                h.into_iter().collect()
            }
        }
        impl<K: $crate::any::Element, V: $crate::any::Element> From<std::collections::BTreeMap<K, V>> for $name<K, V> {
            fn from(h: std::collections::BTreeMap<K, V>) -> Self {
                h.into_iter().collect()
            }
        }
    };
}
pub(crate) use collection_impls;

/// Declares the shared parts of a typed container handle `Name<T, ...>` (a tuple struct
/// of `ObjectRef` and `PhantomData`): `Clone`, `ObjectType` (the downcast checks the
/// object's type, then calls the handle's own `check_elements`), `wrap`, and
/// `handle_common!`.
macro_rules! container_handle {
    ($name:ident<$($g:ident),+>, $index:ident) => {
        impl<$($g: $crate::any::Element),+> Clone for $name<$($g),+> {
            fn clone(&self) -> Self {
                $name(self.0.clone(), std::marker::PhantomData)
            }
        }
        unsafe impl<$($g: $crate::any::Element),+> $crate::object::ObjectType for $name<$($g),+> {
            const TYPE_INDEX: i32 = $crate::sys::ffk_type_index::$index.0 as i32;
            fn schema() -> String {
                let params: Vec<String> = vec![$($g::schema()),+];
                format!("{}<{}>", stringify!($name), params.join(", "))
            }
            fn from_object(o: $crate::object::ObjectRef) -> $crate::Result<Self> {
                $crate::object::expect_instance(&o, Self::TYPE_INDEX)?;
                let h = $name::wrap(o);
                h.check_elements()?;
                Ok(h)
            }
            fn as_object(&self) -> &$crate::object::ObjectRef {
                &self.0
            }
            fn into_object(self) -> $crate::object::ObjectRef {
                self.0
            }
        }
        impl<$($g: $crate::any::Element),+> $name<$($g),+> {
            pub(crate) fn wrap(o: $crate::object::ObjectRef) -> Self {
                $name(o, std::marker::PhantomData)
            }
        }
        $crate::object::handle_common!($name<$($g),+>);
    };
}
pub(crate) use container_handle;
