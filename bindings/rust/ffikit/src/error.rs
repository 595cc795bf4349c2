//! `Error`: a handle to an ffikit Error object (kind, message, backtrace), and `Result`.
//!
//! An Error raised in C reaches Rust as the very object C raised; an `Err(Error)`
//! returned from a Rust callback goes back into C's thread-local slot as that object, so
//! a round trip through C gives back the same Error (same kind, message, frames).
use crate::object::{expect_instance, ObjectRef, ObjectType};
use crate::sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::sync::Mutex;

/// The error kinds ffikit itself raises (ffikit/error.h), for `match`; any other name a
/// library chose is `Other`. The one table that maps C's kind names to Rust.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `RuntimeError`
    Runtime,
    /// `ValueError`
    Value,
    /// `TypeError`
    Type,
    /// `IndexError`
    Index,
    /// `KeyError`
    Key,
    /// `MemoryError`
    Memory,
    /// `AttributeError`
    Attribute,
    /// `NotImplementedError`
    NotImplemented,
    /// `AssertionError`
    Assertion,
    /// `OverflowError`: a value outside the range its destination holds.
    Overflow,
    /// `FileNotFoundError`: a named resource (shared memory, a library) is missing.
    FileNotFound,
    /// Any other kind name.
    Other(String),
}

const KINDS: [(&[u8], ErrorKind); 11] = [
    (sys::FFK_ERR_RUNTIME, ErrorKind::Runtime),
    (sys::FFK_ERR_VALUE, ErrorKind::Value),
    (sys::FFK_ERR_TYPE, ErrorKind::Type),
    (sys::FFK_ERR_INDEX, ErrorKind::Index),
    (sys::FFK_ERR_KEY, ErrorKind::Key),
    (sys::FFK_ERR_MEMORY, ErrorKind::Memory),
    (sys::FFK_ERR_ATTRIBUTE, ErrorKind::Attribute),
    (sys::FFK_ERR_NOT_IMPLEMENTED, ErrorKind::NotImplemented),
    (sys::FFK_ERR_ASSERTION, ErrorKind::Assertion),
    (sys::FFK_ERR_OVERFLOW, ErrorKind::Overflow),
    (sys::FFK_ERR_FILE_NOT_FOUND, ErrorKind::FileNotFound),
];

impl ErrorKind {
    /// The kind named `name` ("TypeError" gives `Type`).
    pub fn from_name(name: &str) -> ErrorKind {
        KINDS
            .iter()
            .find(|(n, _)| &n[..n.len() - 1] == name.as_bytes())
            .map_or_else(|| ErrorKind::Other(name.to_string()), |(_, k)| k.clone())
    }

    /// The C name of the kind ("TypeError").
    pub fn name(&self) -> &str {
        match self {
            ErrorKind::Other(name) => name,
            k => {
                let (n, _) = KINDS.iter().find(|(_, x)| x == k).expect("every named kind is in KINDS");
                std::str::from_utf8(&n[..n.len() - 1]).expect("ASCII")
            }
        }
    }
}

/// What every fallible call returns.
pub type Result<T> = std::result::Result<T, Error>;

/// An ffikit Error object: a kind (`"ValueError"`), a message and a backtrace.
///
/// An object handle like the others (`ObjectType`): `Clone` shares the object,
/// `ObjectRef::downcast::<Error>()` checks the kind of object, and it is an element type
/// (`Array<Error>`, `List<Error>`, a typed Function's `Error` parameter). Equality and
/// `Hash` are C's for objects other than strings and containers (`ffk_any_equal`,
/// `ffk_structural_equal`): the same object. Two Errors made apart with the same kind and
/// message are different errors (compare `kind()` and `message()` for that).
///
/// ```
/// use ffikit::{Array, Error, ObjectRef};
/// let e = Error::new("ValueError", "bad value 42");
/// assert_eq!(e.kind(), "ValueError");
/// assert_eq!(e.to_string(), "ValueError: bad value 42");
/// let o: ObjectRef = e.clone().into();
/// assert!(o.downcast::<Error>().unwrap().is(&e));
/// let errors: Array<Error> = vec![e.clone()].into();
/// assert_eq!(errors.get(0).unwrap(), e);
/// assert_ne!(Error::new("ValueError", "bad value 42"), e);
/// ```
#[derive(Clone)]
#[repr(transparent)]
pub struct Error(pub(crate) ObjectRef);

/// `ffk_error_backtrace` builds its text lazily and `ffk_error_append_frame` changes it:
/// Rust callers serialise both so a shared `&Error` is safe to use from many threads.
static FRAMES: Mutex<()> = Mutex::new(());

impl Error {
    /// A new Error of `kind` with `message` (not raised; no native backtrace).
    ///
    /// ```
    /// let e = ffikit::Error::new("KeyError", "missing");
    /// assert_eq!((e.kind(), e.message()), ("KeyError".to_string(), "missing".to_string()));
    /// ```
    pub fn new(kind: &str, message: &str) -> Error {
        let kind = CString::new(kind.replace('\0', "")).unwrap();
        let message = CString::new(message.replace('\0', "\\0")).unwrap();
        // SAFETY: both strings are NUL-terminated and live for the call.
        let p = unsafe { sys::ffk_error_new(kind.as_ptr(), message.as_ptr()) };
        match unsafe { ObjectRef::from_raw(p.cast()) } {
            Some(o) => Error(o),
            None => Error::fetch(), // the MemoryError ffk_error_new raised
        }
    }

    /// Moves the calling thread's pending error out of ffikit's slot. Used right after a C
    /// call reported failure; when the slot is empty (a C bug) gives a RuntimeError.
    pub(crate) fn fetch() -> Error {
        // SAFETY: ffk_error_fetch returns a new reference or NULL.
        match unsafe { ObjectRef::from_raw(sys::ffk_error_fetch().cast()) } {
            Some(o) => Error(o),
            None => Error::new("RuntimeError", "ffikit reported a failure without an error"),
        }
    }

    /// Puts this error into the calling thread's slot (what a callback does to raise it).
    pub(crate) fn restore(self) {
        // SAFETY: ffk_error_restore steals the reference we give up.
        unsafe { sys::ffk_error_restore(self.0.into_raw().cast()) }
    }

    fn raw(&self) -> *mut sys::ffk_error {
        self.0.as_ptr().cast()
    }

    /// The kind, such as `"TypeError"`.
    pub fn kind(&self) -> String {
        // SAFETY: the kind is borrowed from the live, immutable error object.
        unsafe { CStr::from_ptr(sys::ffk_error_kind(self.raw())) }.to_string_lossy().into_owned()
    }

    /// The kind as an `ErrorKind`, for `match`.
    ///
    /// ```
    /// use ffikit::{Array, ErrorKind};
    /// let a: Array<i64> = Array::new().unwrap();
    /// match a.get(0) {
    ///     Err(e) if e.error_kind() == ErrorKind::Index => {}
    ///     other => panic!("{:?}", other),
    /// }
    /// assert_eq!(ffikit::Error::new("mylib.Oops", "").error_kind(), ErrorKind::Other("mylib.Oops".into()));
    /// ```
    pub fn error_kind(&self) -> ErrorKind {
        ErrorKind::from_name(&self.kind())
    }

    /// A new Error of a standard kind.
    ///
    /// ```
    /// let e = ffikit::Error::of(ffikit::ErrorKind::Value, "bad");
    /// assert_eq!(e.to_string(), "ValueError: bad");
    /// ```
    pub fn of(kind: ErrorKind, message: &str) -> Error {
        Error::new(kind.name(), message)
    }

    /// The message.
    pub fn message(&self) -> String {
        // SAFETY: as for kind.
        unsafe { CStr::from_ptr(sys::ffk_error_message(self.raw())) }.to_string_lossy().into_owned()
    }

    /// The backtrace, one frame a line, innermost first (native frames where it was raised,
    /// then a frame for every Function call it crossed).
    ///
    /// ```
    /// let e = ffikit::Error::new("ValueError", "x");
    /// e.append_frame("  in Rust test").unwrap();
    /// assert!(e.backtrace().contains("in Rust test"));
    /// ```
    pub fn backtrace(&self) -> String {
        let _guard = FRAMES.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the text is borrowed until the next append, which the lock excludes.
        unsafe { CStr::from_ptr(sys::ffk_error_backtrace(self.raw())) }.to_string_lossy().into_owned()
    }

    /// Appends a frame to the backtrace, as an error crosses a boundary.
    pub fn append_frame(&self, frame: &str) -> Result<()> {
        let frame = CString::new(frame.replace('\0', "")).unwrap();
        let _guard = FRAMES.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: valid error and NUL-terminated frame.
        check(unsafe { sys::ffk_error_append_frame(self.raw(), frame.as_ptr()) })
    }

    /// True when `self` and `other` are the same Error object.
    pub fn is(&self, other: &Error) -> bool {
        self.0.as_ptr() == other.0.as_ptr()
    }

    /// The Error as an untyped object handle.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error").field("kind", &self.kind()).field("message", &self.message()).finish()
    }
}

// SAFETY: Error is repr(transparent) over ObjectRef, and from_object accepts only
// Error objects (and subtypes).
unsafe impl ObjectType for Error {
    const TYPE_INDEX: i32 = sys::ffk_type_index::FFK_TYPE_ERROR.0 as i32;
    fn schema() -> String {
        "Error".into()
    }
    fn from_object(o: ObjectRef) -> Result<Self> {
        expect_instance(&o, Self::TYPE_INDEX)?;
        Ok(Error(o))
    }
    fn as_object(&self) -> &ObjectRef {
        &self.0
    }
    fn into_object(self) -> ObjectRef {
        self.0
    }
}

impl From<Error> for ObjectRef {
    fn from(e: Error) -> ObjectRef {
        e.0
    }
}

impl TryFrom<ObjectRef> for Error {
    type Error = Error;
    fn try_from(o: ObjectRef) -> Result<Error> {
        Error::from_object(o)
    }
}

/// Identity, as C compares Errors (`ffk_any_equal` and `ffk_structural_equal`), so an
/// `Error` and the `Any` holding it agree.
impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        self.is(other)
    }
}
impl Eq for Error {}

/// C's structural hash of the object (by identity for an Error), consistent with `Eq`
/// and with `Any`'s `Hash`.
impl std::hash::Hash for Error {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl std::error::Error for Error {}

/// 0 → Ok, anything else → the pending error.
pub(crate) fn check(rc: i32) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::fetch())
    }
}

/// A new reference or NULL → the pending error.
pub(crate) fn check_ptr<T>(p: *mut T) -> Result<ObjectRef> {
    // SAFETY: callers pass pointers that C documents as new references.
    unsafe { ObjectRef::from_raw(p.cast()) }.ok_or_else(Error::fetch)
}

/// A NUL-terminated copy of `s`, or a ValueError naming the embedded NUL.
pub(crate) fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|e| Error::new("ValueError", &format!("string has a NUL byte at offset {}", e.nul_position())))
}

/// One step of a C iterator (1: an item, 0: the end, -1: an error such as "List changed
/// during iteration") as what a Rust iterator yields; `done` ends it after the end or
/// after the error item.
pub(crate) fn iter_step<T>(done: &mut bool, rc: i32, item: impl FnOnce() -> Result<T>) -> Option<Result<T>> {
    match rc {
        1 => Some(item()),
        0 => {
            *done = true;
            None
        }
        _ => {
            *done = true;
            Some(Err(Error::fetch()))
        }
    }
}
