//! Weak handles and cycle reports (ffikit/weak_ref.h, ffikit/cycles.h).
//!
//! ffikit counts references and has no cycle collector (as TVM-FFI): objects that hold
//! each other through fields or `List`/`Dict` elements are never freed, in Rust as in C
//! and Python. A [`WeakRef`] is the handle a back reference (a child's pointer to its
//! parent) holds instead, and [`find_cycles`] reports the cycles left in a value.
use crate::any::AnyView;
use crate::error::{Error, Result};
use crate::object::{object_handle, ObjectRef, ObjectType};
use crate::sys;

object_handle!(
    /// A WeakRef object: an ffikit object that refers to another without keeping it
    /// alive, so a field of type `Any`/`Object` or a container element can hold it and
    /// break a cycle. Two WeakRefs are equal (and hash alike) when they refer to the same
    /// object, before and after it is gone.
    ///
    /// ```
    /// use ffikit::{List, ObjectType, WeakRef};
    /// let target: List<i64> = vec![1, 2].into();
    /// let weak = WeakRef::new(&target).unwrap();
    /// assert!(weak.upgrade().unwrap().unwrap().ptr_eq(target.as_object()));
    /// drop(target);
    /// assert!(weak.upgrade().unwrap().is_none());
    /// ```
    WeakRef, FFK_TYPE_WEAK_REF, "WeakRef"
);

impl WeakRef {
    /// A new WeakRef to `target` (which it does not keep alive). Fails only with a
    /// MemoryError.
    pub fn new<T: ObjectType>(target: &T) -> Result<WeakRef> {
        // SAFETY: a live object borrowed from `target`; the result is a new reference or NULL.
        let p = unsafe { sys::ffk_weak_ref_new(target.as_object().as_ptr()) };
        // SAFETY: a new reference (or NULL with C's error set).
        match unsafe { ObjectRef::from_raw(p) } {
            Some(o) => Ok(WeakRef(o)),
            None => Err(Error::fetch()),
        }
    }

    /// The target while something holds it, `None` once it is gone. The error case cannot
    /// happen for a `WeakRef` handle (C checks the type), but C's answer is passed on.
    pub fn upgrade(&self) -> Result<Option<ObjectRef>> {
        let mut out = std::ptr::null_mut();
        // SAFETY: a live WeakRef and an out parameter; on 1 *out is a new reference.
        match unsafe { sys::ffk_weak_ref_get(self.0.as_ptr(), &mut out) } {
            // SAFETY: a new reference, owned from here on.
            1 => Ok(unsafe { ObjectRef::from_raw(out) }),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Whether the target is still held (a snapshot: another thread may drop it).
    pub fn is_alive(&self) -> bool {
        // SAFETY: a live WeakRef.
        unsafe { sys::ffk_weak_ref_alive(self.0.as_ptr()) }
    }
}

/// The reference cycles reachable from `v`, at most `max_cycles` of them: each is the
/// objects on it, every one holding the next and the last holding the first (an object
/// that holds itself is a cycle of one). It follows container elements (Map/Dict keys and
/// values) and reflected objects' fields, never a [`WeakRef`]'s target, and returns an
/// empty list exactly when nothing reachable lies on a cycle. Any depth works. Errors are
/// C's: a ValueError when `max_cycles` < 1, a MemoryError.
///
/// ```
/// use ffikit::{find_cycles, Any, List, ObjectType};
/// let l: List<Any> = List::new().unwrap();
/// assert!(find_cycles(&l, 10).unwrap().is_empty());
/// l.push(Any::from(&l)).unwrap(); // l holds itself
/// let cycles = find_cycles(&l, 10).unwrap();
/// assert_eq!(cycles.len(), 1);
/// assert!(cycles[0][0].ptr_eq(l.as_object()));
/// l.clear().unwrap(); // break the cycle, or l is never freed
/// ```
pub fn find_cycles<'a>(v: impl Into<AnyView<'a>>, max_cycles: i64) -> Result<Vec<Vec<ObjectRef>>> {
    let v = v.into();
    // SAFETY: a borrowed valid value; the result is a new List reference or NULL.
    let found = unsafe { sys::ffk_debug_find_cycles(v.as_raw(), max_cycles) };
    // SAFETY: a new reference (or NULL with C's error set), released when `found` drops.
    let found = unsafe { ObjectRef::from_raw(found as *mut sys::ffk_object) }.ok_or_else(Error::fetch)?;
    let list_items = |l: &ObjectRef| -> Result<Vec<ObjectRef>> {
        let l = l.as_ptr() as *mut sys::ffk_list;
        // SAFETY: a live List.
        let n = unsafe { sys::ffk_list_size(l) };
        let mut out = Vec::with_capacity(n.max(0) as usize);
        for i in 0..n {
            let mut item = crate::any::none_raw();
            // SAFETY: a live List, an index in range (nothing else holds the result), an out value.
            crate::error::check(unsafe { sys::ffk_list_get(l, i, &mut item) })?;
            // SAFETY: every item the walk stores is an object; the value's reference moves to the handle.
            out.push(unsafe { ObjectRef::from_raw(item.__bindgen_anon_1.v_obj) }.expect("an object"));
        }
        Ok(out)
    };
    list_items(&found)?.iter().map(list_items).collect()
}
