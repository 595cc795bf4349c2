//! Structural tools over any value (ffikit/structural.h): equality and hashing by content,
//! where two values first differ, and deep copies.
//!
//! Every function takes what converts to a borrowed value: `&Any`, an `AnyView`, any object
//! handle (`&Array<i64>`, `&ObjectRef`, a [`reflected_type!`](crate::reflected_type)
//! handle) or a plain `i64`/`f64`/`bool`. The rules are C's: containers by content (an
//! Array never equals a List; 1, true and 1.0 stay distinct), reflected objects field by
//! field skipping compare-off fields, per-type `__s_equal__`/`__s_hash__` hooks
//! ([`TypeInfo::set_attr`](crate::TypeInfo::set_attr)), identity for everything else,
//! cycles ended, nesting deeper than 1000 a RuntimeError. Unlike `Any`'s `PartialEq` and
//! `Hash` (which cannot return an error, and so panic with C's message), these return it.
use crate::access_path::AccessPath;
use crate::any::{none_raw, Any, AnyView};
use crate::error::{check, Error, Result};
use crate::object::ObjectRef;
use crate::sys;

/// Whether `a` and `b` are structurally equal. An error is C's: a RuntimeError for nesting
/// deeper than the limit, a MemoryError, or what a type's `__s_equal__` hook raised.
///
/// ```
/// use ffikit::{structural_eq, Any, Array, List};
/// let a: Array<i64> = vec![1, 2].into();
/// let b: Array<i64> = vec![1, 2].into();
/// assert!(structural_eq(&a, &b).unwrap());
/// let l: List<i64> = vec![1, 2].into();
/// assert!(!structural_eq(&a, &l).unwrap()); // an Array never equals a List
/// assert!(!structural_eq(&Any::from(1i64), &Any::from(1.0)).unwrap());
/// ```
pub fn structural_eq<'a, 'b>(a: impl Into<AnyView<'a>>, b: impl Into<AnyView<'b>>) -> Result<bool> {
    let (a, b) = (a.into(), b.into());
    // SAFETY: two borrowed valid values.
    match unsafe { sys::ffk_structural_equal(a.as_raw(), b.as_raw()) } {
        1 => Ok(true),
        0 => Ok(false),
        _ => Err(Error::fetch()),
    }
}

/// The structural hash of `v`: structurally equal values hash alike (Map and Dict without
/// regard to order; a reflected object by its type key and compared fields). Errors as
/// [`structural_eq`].
///
/// ```
/// use ffikit::{structural_hash, Map};
/// let a: Map<String, i64> = vec![("x".to_string(), 1), ("y".to_string(), 2)].into();
/// let b: Map<String, i64> = vec![("y".to_string(), 2), ("x".to_string(), 1)].into();
/// assert_eq!(structural_hash(&a).unwrap(), structural_hash(&b).unwrap());
/// ```
pub fn structural_hash<'a>(v: impl Into<AnyView<'a>>) -> Result<u64> {
    let v = v.into();
    let mut out = 0u64;
    // SAFETY: a borrowed valid value and an out parameter.
    check(unsafe { sys::ffk_structural_hash(v.as_raw(), &mut out) })?;
    Ok(out)
}

/// Options of [`structural_eq_with`], [`structural_hash_with`] and
/// [`first_structural_mismatch_with`] (C's `FFK_STRUCTURAL_*` flags); the default is what
/// the plain functions use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StructuralOptions {
    /// Variables met outside any definition region (free variables) bind on first meeting
    /// instead of comparing by identity (tvm_ffi's `map_free_vars`), one to one.
    pub map_free_vars: bool,
}

impl StructuralOptions {
    fn flags(self) -> u32 {
        if self.map_free_vars { sys::FFK_STRUCTURAL_MAP_FREE_VARS as u32 } else { 0 }
    }
}

/// [`structural_eq`] with options: `map_free_vars` binds free variables one to one.
/// Errors as [`structural_eq`].
pub fn structural_eq_with<'a, 'b>(a: impl Into<AnyView<'a>>, b: impl Into<AnyView<'b>>, options: StructuralOptions) -> Result<bool> {
    let (a, b) = (a.into(), b.into());
    // SAFETY: two borrowed valid values and known flags.
    match unsafe { sys::ffk_structural_equal_opts(a.as_raw(), b.as_raw(), options.flags()) } {
        1 => Ok(true),
        0 => Ok(false),
        _ => Err(Error::fetch()),
    }
}

/// [`structural_hash`] with options: values equal under `options` hash alike under them.
pub fn structural_hash_with<'a>(v: impl Into<AnyView<'a>>, options: StructuralOptions) -> Result<u64> {
    let v = v.into();
    let mut out = 0u64;
    // SAFETY: a borrowed valid value, known flags and an out parameter.
    check(unsafe { sys::ffk_structural_hash_opts(v.as_raw(), options.flags(), &mut out) })?;
    Ok(out)
}

/// [`first_structural_mismatch`] with options: `None` exactly when [`structural_eq_with`]
/// is true under the same options.
pub fn first_structural_mismatch_with<'a, 'b>(
    a: impl Into<AnyView<'a>>,
    b: impl Into<AnyView<'b>>,
    options: StructuralOptions,
) -> Result<Option<(AccessPath, AccessPath)>> {
    mismatch(a.into(), b.into(), options.flags())
}

/// Where `a` and `b` first differ structurally: `None` when they are equal, else the paths
/// to the first difference in `a` and in `b` (tvm_ffi's paths: a sequence shorter on one
/// side gives `[<missing:i>]` there, a key on one side only `[<missing:k>]` on the other).
/// "First" follows the equality walk's order. Errors as [`structural_eq`].
///
/// ```
/// use ffikit::{first_structural_mismatch, Any, Array, Map};
/// let a: Map<String, Array<i64>> = vec![("k".to_string(), vec![1, 2].into())].into();
/// let b: Map<String, Array<i64>> = vec![("k".to_string(), vec![1, 3].into())].into();
/// let (pa, pb) = first_structural_mismatch(&a, &b).unwrap().unwrap();
/// assert_eq!((pa.to_string(), pb.to_string()), ("<root>[\"k\"][1]".to_string(), "<root>[\"k\"][1]".to_string()));
/// assert!(first_structural_mismatch(&a, &a.clone()).unwrap().is_none());
/// ```
pub fn first_structural_mismatch<'a, 'b>(
    a: impl Into<AnyView<'a>>,
    b: impl Into<AnyView<'b>>,
) -> Result<Option<(AccessPath, AccessPath)>> {
    mismatch(a.into(), b.into(), 0)
}

fn mismatch(a: AnyView<'_>, b: AnyView<'_>, flags: u32) -> Result<Option<(AccessPath, AccessPath)>> {
    let (mut lhs, mut rhs) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: two borrowed valid values and known flags; on 1 both outs are new references, else NULL.
    let rc = unsafe { sys::ffk_structural_first_mismatch_opts(a.as_raw(), b.as_raw(), flags, &mut lhs, &mut rhs) };
    // SAFETY: new references or NULL, owned from here on (also on a surprising return code).
    let (lhs, rhs) = unsafe { (ObjectRef::from_raw(lhs), ObjectRef::from_raw(rhs)) };
    match (rc, lhs, rhs) {
        (0, _, _) => Ok(None),
        (1, Some(l), Some(r)) => Ok(Some((AccessPath::from_raw_path(l), AccessPath::from_raw_path(r)))),
        (1, _, _) => Err(Error::new("RuntimeError", "structural mismatch reported without its two paths")),
        _ => Err(Error::fetch()),
    }
}

/// A deep copy of `v` (C's `ffk_deep_copy`): every List and Dict reachable from it is
/// copied, and every object made by reflection, field by field; what cannot change
/// (strings, an Array of plain values) is shared. Sharing and cycles are kept. The copy is
/// structurally equal to `v`. Errors: a RuntimeError for nesting deeper than the limit, a
/// MemoryError, or what a field's default factory raised.
///
/// ```
/// use ffikit::{deep_copy, structural_eq, List};
/// let inner: List<i64> = vec![1].into();
/// let outer: List<List<i64>> = vec![inner.clone()].into();
/// let copy: List<List<i64>> = deep_copy(&outer).unwrap().to().unwrap();
/// assert!(structural_eq(&outer, &copy).unwrap());
/// inner.push(2).unwrap();
/// assert_eq!(copy.get(0).unwrap().len(), 1); // the copy has its own inner List
/// ```
pub fn deep_copy<'a>(v: impl Into<AnyView<'a>>) -> Result<Any> {
    let v = v.into();
    let mut out = none_raw();
    // SAFETY: a borrowed valid value; out receives an owned value (None on failure).
    check(unsafe { sys::ffk_deep_copy(v.as_raw(), &mut out) })?;
    Ok(Any(out))
}
