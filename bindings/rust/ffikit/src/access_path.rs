//! `AccessPath` (ffikit/access_path.h): where a value sits inside another, as a path of
//! attribute, item and key steps from a root, the form structural tools report.
//!
//! An access path is an immutable C object of type `ffikit.AccessPath`; extending one makes
//! a child that shares its parent. Everything about a path is C's: its text (`Display`,
//! `<root>.body[1]["k"]`, tvm_ffi's), its equality (same steps, keys compared by key
//! semantics), the prefix test and the checks on a step's key. This module only converts.
//!
//! Invariant: an `AccessPath` handle holds an instance of `ffikit.AccessPath` (checked when
//! one is made from an untyped object), so the C queries below cannot fail on it.
use crate::any::{none_raw, Any, AnyView};
use crate::error::{check_ptr, Error, Result};
use crate::object::{expect_instance, repr_of, structural_hash, ObjectRef, ObjectType};
use crate::sys;
use std::fmt;

/// The kind of one step of an [`AccessPath`] (C's `ffk_access_kind`, tvm_ffi's AccessKind).
///
/// ```
/// use ffikit::AccessKind;
/// assert_eq!(AccessKind::from_raw(2), Some(AccessKind::MapItem));
/// assert_eq!(AccessKind::ArrayItemMissing.raw(), 4);
/// assert_eq!(AccessKind::from_raw(9), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// `.name`: a field of an object (the key is the field name, a str).
    Attr,
    /// `[i]`: an element of an Array, Tuple or List (the key is the index, an int).
    ArrayItem,
    /// `[key]`: a value of a Map or Dict (the key is the map key).
    MapItem,
    /// A field the other side of a comparison has and this one lacks.
    AttrMissing,
    /// An index past this side's end.
    ArrayItemMissing,
    /// A key this side lacks.
    MapItemMissing,
}

impl AccessKind {
    const ALL: [(AccessKind, sys::ffk_access_kind); 6] = [
        (AccessKind::Attr, sys::ffk_access_kind::FFK_ACCESS_ATTR),
        (AccessKind::ArrayItem, sys::ffk_access_kind::FFK_ACCESS_ARRAY_ITEM),
        (AccessKind::MapItem, sys::ffk_access_kind::FFK_ACCESS_MAP_ITEM),
        (AccessKind::AttrMissing, sys::ffk_access_kind::FFK_ACCESS_ATTR_MISSING),
        (AccessKind::ArrayItemMissing, sys::ffk_access_kind::FFK_ACCESS_ARRAY_ITEM_MISSING),
        (AccessKind::MapItemMissing, sys::ffk_access_kind::FFK_ACCESS_MAP_ITEM_MISSING),
    ];

    /// The kind with C's value `v`, `None` for a value outside `ffk_access_kind`.
    pub fn from_raw(v: i32) -> Option<AccessKind> {
        Self::ALL.iter().find(|(_, raw)| raw.0 as i64 == v as i64).map(|(k, _)| *k)
    }

    /// C's value of the kind.
    pub fn raw(self) -> i32 {
        Self::ALL.iter().find(|(k, _)| *k == self).map(|(_, raw)| raw.0 as i32).expect("every kind is in ALL")
    }
}

/// One step of an [`AccessPath`]: its kind and its key (the field name as a str, the index
/// as an int, or the map key). Equal when the kinds are and the keys are structurally equal.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessStep {
    /// What the step accesses.
    pub kind: AccessKind,
    /// The field name, index or map key.
    pub key: Any,
}

/// A path from a root value to a value inside it (C's `ffikit.AccessPath` object), as
/// [`first_structural_mismatch`](crate::first_structural_mismatch) reports it.
///
/// `Clone` shares the immutable path; `Display`/`Debug` print C's text; `PartialEq` is C's
/// path equality (the same steps) and `Hash` agrees with it.
///
/// ```
/// use ffikit::{AccessKind, AccessPath, Any};
/// let p = AccessPath::root().unwrap().attr("body").unwrap().array_item(1).unwrap();
/// let p = p.map_item(&Any::from("k")).unwrap();
/// assert_eq!(p.to_string(), "<root>.body[1][\"k\"]");
/// assert_eq!(p.depth(), 3);
/// assert_eq!(p.parent().unwrap().to_string(), "<root>.body[1]");
/// let kinds: Vec<AccessKind> = p.steps().iter().map(|s| s.kind).collect();
/// assert_eq!(kinds, [AccessKind::Attr, AccessKind::ArrayItem, AccessKind::MapItem]);
/// assert!(p.parent().unwrap().is_prefix_of(&p));
/// let again = AccessPath::root().unwrap().attr("body").unwrap().array_item(1).unwrap();
/// assert_eq!(again.map_item(&Any::from("k")).unwrap(), p);
/// assert_eq!(AccessPath::root().unwrap().array_item_missing(2).unwrap().to_string(), "<root>[<missing:2>]");
/// ```
#[derive(Clone)]
#[repr(transparent)]
pub struct AccessPath(ObjectRef);

impl AccessPath {
    /// The type index of `ffikit.AccessPath` (registered when the library loads).
    pub fn type_index() -> i32 {
        // SAFETY: cannot fail.
        unsafe { sys::ffk_access_path_type_index() }
    }

    /// A path C returned as a new reference (a mismatch's); C's own result is a path.
    pub(crate) fn from_raw_path(o: ObjectRef) -> AccessPath {
        debug_assert!(o.is_instance(AccessPath::type_index()));
        AccessPath(o)
    }

    /// The root path, `<root>` (depth 0). Fails only when out of memory.
    pub fn root() -> Result<AccessPath> {
        // SAFETY: a new reference or NULL with a MemoryError.
        check_ptr(unsafe { sys::ffk_access_path_root() }).map(AccessPath)
    }

    /// A new path: this one followed by a step of `kind` with `key` (this path is
    /// unchanged). C checks the key: a TypeError for a key of the wrong type for the kind
    /// (a str for the attribute kinds, an int for the array kinds).
    ///
    /// ```
    /// use ffikit::{AccessKind, AccessPath, AnyView, ErrorKind};
    /// let root = AccessPath::root().unwrap();
    /// let e = root.extend(AccessKind::ArrayItem, AnyView::from(1.5)).unwrap_err();
    /// assert_eq!(e.error_kind(), ErrorKind::Type);
    /// ```
    pub fn extend<'a>(&self, kind: AccessKind, key: impl Into<AnyView<'a>>) -> Result<AccessPath> {
        let key = key.into();
        // SAFETY: a live path and a borrowed valid key; a new reference or NULL with the error set.
        check_ptr(unsafe { sys::ffk_access_path_extend(self.0.as_ptr(), kind.raw(), key.as_raw()) }).map(AccessPath)
    }

    /// This path followed by the field `name` (`.name`).
    pub fn attr(&self, name: &str) -> Result<AccessPath> {
        let key = Any::str(name)?;
        self.extend(AccessKind::Attr, &key)
    }

    /// This path followed by the element `index` (`[index]`).
    pub fn array_item(&self, index: i64) -> Result<AccessPath> {
        self.extend(AccessKind::ArrayItem, AnyView::from(index))
    }

    /// This path followed by the map value at `key` (`[key]`, the key as C prints it).
    pub fn map_item<'a>(&self, key: impl Into<AnyView<'a>>) -> Result<AccessPath> {
        self.extend(AccessKind::MapItem, key)
    }

    /// This path followed by a field `name` this side lacks.
    pub fn attr_missing(&self, name: &str) -> Result<AccessPath> {
        let key = Any::str(name)?;
        self.extend(AccessKind::AttrMissing, &key)
    }

    /// This path followed by an index past this side's end (`[<missing:index>]`).
    pub fn array_item_missing(&self, index: i64) -> Result<AccessPath> {
        self.extend(AccessKind::ArrayItemMissing, AnyView::from(index))
    }

    /// This path followed by a map key this side lacks (`[<missing:key>]`).
    pub fn map_item_missing<'a>(&self, key: impl Into<AnyView<'a>>) -> Result<AccessPath> {
        self.extend(AccessKind::MapItemMissing, key)
    }

    /// The path without its last step, `None` for the root.
    pub fn parent(&self) -> Option<AccessPath> {
        // SAFETY: a live path; the parent is borrowed from it and retained for the handle.
        let p = unsafe { sys::ffk_access_path_parent(self.0.as_ptr()) };
        (!p.is_null()).then(|| AccessPath(unsafe { ObjectRef::from_borrowed(p as *mut sys::ffk_object) }))
    }

    /// The number of steps (0 for the root).
    pub fn depth(&self) -> usize {
        // SAFETY: a live path, so C cannot fail (-1 is only for a non-path).
        let d = unsafe { sys::ffk_access_path_depth(self.0.as_ptr()) };
        debug_assert!(d >= 0, "an AccessPath handle holds a path");
        d.max(0) as usize
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.depth() == 0
    }

    /// The last step, `None` for the root.
    pub fn last_step(&self) -> Option<AccessStep> {
        let (mut kind, mut key) = (0i32, none_raw());
        // SAFETY: a live path; key receives a new reference.
        let rc = unsafe { sys::ffk_access_path_last_step(self.0.as_ptr(), &mut kind, &mut key) };
        let key = Any(key);
        if rc != 1 {
            if rc < 0 {
                // Only a non-path fails, which a handle never holds.
                drop(Error::fetch());
            }
            return None;
        }
        let kind = AccessKind::from_raw(kind).expect("C reports a kind of ffk_access_kind");
        Some(AccessStep { kind, key })
    }

    /// Every step, root first.
    pub fn steps(&self) -> Vec<AccessStep> {
        let mut steps = Vec::with_capacity(self.depth());
        let mut at = Some(self.clone());
        while let Some(p) = at {
            if let Some(step) = p.last_step() {
                steps.push(step);
            }
            at = p.parent();
        }
        steps.reverse();
        steps
    }

    /// Whether this path's steps begin `other`'s (a path is a prefix of itself).
    pub fn is_prefix_of(&self, other: &AccessPath) -> bool {
        // SAFETY: two live paths, so C cannot fail.
        unsafe { sys::ffk_access_path_is_prefix_of(self.0.as_ptr(), other.0.as_ptr()) == 1 }
    }
}

// SAFETY: repr(transparent) over ObjectRef; from_object accepts only AccessPath objects.
unsafe impl ObjectType for AccessPath {
    /// The real index is known at run time (`AccessPath::type_index()`); downcasts check it.
    const TYPE_INDEX: i32 = sys::ffk_type_index::FFK_TYPE_OBJECT.0 as i32;
    fn schema() -> String {
        "ffikit.AccessPath".into()
    }
    fn from_object(o: ObjectRef) -> Result<Self> {
        expect_instance(&o, AccessPath::type_index())?;
        Ok(AccessPath(o))
    }
    fn as_object(&self) -> &ObjectRef {
        &self.0
    }
    fn into_object(self) -> ObjectRef {
        self.0
    }
}

impl fmt::Display for AccessPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&repr_of(self.0.view().as_raw()))
    }
}

impl fmt::Debug for AccessPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccessPath({})", self)
    }
}

/// C's path equality: the same steps (kinds equal, keys equal by key semantics).
impl PartialEq for AccessPath {
    fn eq(&self, other: &AccessPath) -> bool {
        // SAFETY: two live paths, so C cannot fail.
        unsafe { sys::ffk_access_path_equal(self.0.as_ptr(), other.0.as_ptr()) == 1 }
    }
}
impl Eq for AccessPath {}

/// C's structural hash of the path object: paths with the same steps hash alike.
impl std::hash::Hash for AccessPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(structural_hash(self.0.view().as_raw()))
    }
}

impl From<AccessPath> for ObjectRef {
    fn from(p: AccessPath) -> ObjectRef {
        p.0
    }
}

impl TryFrom<ObjectRef> for AccessPath {
    type Error = Error;
    fn try_from(o: ObjectRef) -> Result<AccessPath> {
        AccessPath::from_object(o)
    }
}
