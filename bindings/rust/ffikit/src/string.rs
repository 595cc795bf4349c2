//! `Str`, `Bytes` and `Shape`: immutable objects (Send + Sync).
use crate::error::{check_ptr, Result};
use crate::object::object_handle;
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

object_handle!(
    /// A String object (UTF-8, always an object: for values prefer `Any::from(&str)`,
    /// which keeps strings of at most 7 bytes inline).
    ///
    /// ```
    /// let s = ffikit::Str::new("héllo").unwrap();
    /// assert_eq!((s.as_str(), s.len()), ("héllo", 6));
    /// assert_eq!(format!("{}", s), "\"héllo\"");
    /// ```
    Str, FFK_TYPE_STRING, "str"
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
    /// A Bytes object (any content).
    ///
    /// ```
    /// let b = ffikit::Bytes::new(b"\x00\x01 raw bytes").unwrap();
    /// assert_eq!(b.as_bytes()[1], 1);
    /// ```
    Bytes, FFK_TYPE_BYTES, "bytes"
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
