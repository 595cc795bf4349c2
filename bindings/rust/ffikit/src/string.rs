//! `Str`, `Bytes` and `Shape`: immutable objects (Send + Sync).
use crate::any::{AnyView, OBJECT_BEGIN};
use crate::error::{check_ptr, Result};
use crate::object::{object_from_value, object_handle, ObjectType};
use crate::sys;

/// The bytes of a String/Bytes object, borrowed from it.
///
/// # Safety
/// `s` must be a live String or Bytes object that outlives the slice.
pub(crate) unsafe fn string_bytes<'a>(s: *const sys::ffk_string) -> &'a [u8] {
    let (data, size) = ((*s).data, (*s).size);
    if size == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(data.cast(), size)
    }
}

const SMALL_STR: i32 = sys::ffk_type_index::FFK_TYPE_SMALL_STR.0 as i32;
const RAW_STR: i32 = sys::ffk_type_index::FFK_TYPE_RAW_STR.0 as i32;
const SMALL_BYTES: i32 = sys::ffk_type_index::FFK_TYPE_SMALL_BYTES.0 as i32;
const BYTE_ARRAY_PTR: i32 = sys::ffk_type_index::FFK_TYPE_BYTE_ARRAY_PTR.0 as i32;

/// Whether `v` holds an object of kind `T` (or a subtype).
fn holds<T: ObjectType>(v: &sys::ffk_any) -> bool {
    // SAFETY: the tag says v_obj is a live object.
    v.type_index >= OBJECT_BEGIN && unsafe { sys::ffk_object_is_instance(v.__bindgen_anon_1.v_obj, T::TYPE_INDEX) }
}

/// A str value in any of its forms (an inline SmallStr of at most 7 bytes, a String
/// object, a borrowed C string) as a `Str`, making an object when there is none.
fn str_from_value(v: &sys::ffk_any) -> Result<Str> {
    if v.type_index >= OBJECT_BEGIN {
        return object_from_value(v);
    }
    // SAFETY: a borrowed valid value, read for the duration of the copy.
    let view = unsafe { AnyView::from_raw(*v) };
    Str::new(view.as_str()?) // a TypeError "expected str but got int" for other kinds
}

fn str_accepts(v: &sys::ffk_any) -> bool {
    // SAFETY: a raw string view's payload is its pointer.
    v.type_index == SMALL_STR || (v.type_index == RAW_STR && !unsafe { v.__bindgen_anon_1.v_ptr }.is_null()) || holds::<Str>(v)
}

/// The same for bytes: SmallBytes, a Bytes object, or a borrowed byte array.
fn bytes_from_value(v: &sys::ffk_any) -> Result<Bytes> {
    if v.type_index >= OBJECT_BEGIN {
        return object_from_value(v);
    }
    // SAFETY: as in str_from_value.
    let view = unsafe { AnyView::from_raw(*v) };
    Bytes::new(view.as_bytes()?)
}

fn bytes_accepts(v: &sys::ffk_any) -> bool {
    // SAFETY: a byte-array view's payload is its pointer.
    v.type_index == SMALL_BYTES || (v.type_index == BYTE_ARRAY_PTR && !unsafe { v.__bindgen_anon_1.v_ptr }.is_null()) || holds::<Bytes>(v)
}

object_handle!(
    /// A String object (UTF-8). Values keep strings of at most 7 bytes inline, with no
    /// object (`Any::from(&str)` does); wherever a `Str` is expected (an element of
    /// `Array<Str>` or `List<Str>`, a `Map<Str, _>` key, a typed Function's argument or
    /// result, `Any::to::<Str>()`) such a value is accepted and becomes a `Str` object.
    ///
    /// ```
    /// use ffikit::{Any, Array, ObjectRef, Str};
    /// let s = Str::new("héllo").unwrap();
    /// assert_eq!((s.as_str(), s.len()), ("héllo", 6));
    /// assert_eq!(format!("{}", s), "\"héllo\"");
    /// let short = Any::from("hi");             // inline: no object
    /// assert_eq!(short.to::<Str>().unwrap().as_str(), "hi");
    /// let untyped: ObjectRef = Array::<Any>::from(vec![short]).into();
    /// let a: Array<Str> = untyped.downcast().unwrap();
    /// assert_eq!(a.get(0).unwrap().as_str(), "hi");
    /// ```
    Str, FFK_TYPE_STRING, "str",
    from_value = str_from_value, accepts_value = str_accepts
);

impl Str {
    /// A new String object holding a copy of `s`.
    pub fn new(s: &str) -> Result<Str> {
        // SAFETY: data/size describe valid UTF-8.
        check_ptr(unsafe { sys::ffk_string_new(s.as_ptr().cast(), s.len()) }).map(Str)
    }
    /// The text, borrowed from the object.
    pub fn as_str(&self) -> &str {
        // SAFETY: a live String object holds valid UTF-8 and is immutable.
        unsafe { std::str::from_utf8_unchecked(string_bytes(self.0.as_ptr().cast())) }
    }
    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.as_str().len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

object_handle!(
    /// A Bytes object (any content). As with `Str`, inline bytes values (at most 7 bytes)
    /// are accepted wherever a `Bytes` is expected and become an object.
    ///
    /// ```
    /// let b = ffikit::Bytes::new(b"\x00\x01 raw bytes").unwrap();
    /// assert_eq!(b.as_bytes()[1], 1);
    /// assert_eq!(ffikit::Any::from(&b"ab"[..]).to::<ffikit::Bytes>().unwrap().as_bytes(), b"ab");
    /// ```
    Bytes, FFK_TYPE_BYTES, "bytes",
    from_value = bytes_from_value, accepts_value = bytes_accepts
);

impl Bytes {
    /// A new Bytes object holding a copy of `b`.
    pub fn new(b: &[u8]) -> Result<Bytes> {
        // SAFETY: data/size describe b.
        check_ptr(unsafe { sys::ffk_bytes_new(b.as_ptr().cast(), b.len()) }).map(Bytes)
    }
    /// The bytes, borrowed from the object.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: a live, immutable Bytes object.
        unsafe { string_bytes(self.0.as_ptr().cast()) }
    }
}

object_handle!(
    /// A Shape object: an immutable list of dimensions.
    ///
    /// ```
    /// let s = ffikit::Shape::new(&[2, 3]).unwrap();
    /// assert_eq!((s.dims(), s.product()), (&[2i64, 3][..], 6));
    /// assert_eq!(s.to_string(), "Shape(2, 3)");
    /// ```
    Shape, FFK_TYPE_SHAPE, "Shape"
);

impl Shape {
    /// A new Shape.
    pub fn new(dims: &[i64]) -> Result<Shape> {
        // SAFETY: dims/len describe the slice.
        check_ptr(unsafe { sys::ffk_shape_new(dims.as_ptr(), dims.len()) }).map(Shape)
    }
    /// The dimensions, borrowed from the object.
    pub fn dims(&self) -> &[i64] {
        // SAFETY: a live, immutable Shape.
        unsafe {
            let s = self.0.as_ptr() as *const sys::ffk_shape;
            if (*s).size == 0 {
                &[]
            } else {
                std::slice::from_raw_parts((*s).data, (*s).size)
            }
        }
    }
    /// The product of the dimensions.
    pub fn product(&self) -> i64 {
        // SAFETY: a live, immutable Shape.
        unsafe { (*(self.0.as_ptr() as *const sys::ffk_shape)).product }
    }
}
