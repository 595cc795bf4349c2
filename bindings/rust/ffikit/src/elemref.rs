//! `ElementRef`: element types a container can lend by reference (`Index`), because
//! their Rust form is the payload of the stored `ffk_any` itself.
use crate::any::{Any, Element, FLOAT, INT, OBJECT_BEGIN};
use crate::object::ObjectType;
use crate::sys;

/// An element type whose value can be borrowed straight out of a stored `ffk_any`.
///
/// # Safety
/// `ref_from` must return a reference only to memory of `v` that is a valid `Self`.
pub unsafe trait ElementRef: Element {
    /// The element as a reference into `v`, or `None` when its stored form differs
    /// (a bool in an `Array<i64>` converts, but cannot be lent as an `&i64`).
    fn ref_from(v: &sys::ffk_any) -> Option<&Self>;
}

unsafe impl ElementRef for Any {
    fn ref_from(v: &sys::ffk_any) -> Option<&Any> {
        // SAFETY: Any is repr(transparent) over ffk_any.
        Some(unsafe { &*(v as *const sys::ffk_any as *const Any) })
    }
}
unsafe impl ElementRef for i64 {
    fn ref_from(v: &sys::ffk_any) -> Option<&i64> {
        // SAFETY: the tag says the payload is an i64.
        (v.type_index == INT).then_some(unsafe { &v.__bindgen_anon_1.v_int })
    }
}
unsafe impl ElementRef for f64 {
    fn ref_from(v: &sys::ffk_any) -> Option<&f64> {
        // SAFETY: the tag says the payload is an f64.
        (v.type_index == FLOAT).then_some(unsafe { &v.__bindgen_anon_1.v_float })
    }
}
unsafe impl<T: ObjectType> ElementRef for T {
    fn ref_from(v: &sys::ffk_any) -> Option<&T> {
        if v.type_index < OBJECT_BEGIN {
            return None;
        }
        // SAFETY: v_obj is a non-null object pointer borrowed from v; T is
        // repr(transparent) over ObjectRef, itself over NonNull<ffk_object>. The
        // container's element check guarantees the object is a T.
        Some(unsafe { &*(&v.__bindgen_anon_1.v_obj as *const *mut sys::ffk_object as *const T) })
    }
}
