//! Structural walks and rewrites (ffikit/structural_visit.h, tvm_ffi's `structural_walk`,
//! `structural_visit`, `structural_map` and `structural_mutate`): what a compiler pass
//! written in Rust needs.
//!
//! The walk looks where structural equality looks: the elements of Arrays, Tuples and
//! Lists, the values (not keys) of Maps and Dicts, the compared fields of reflected
//! objects. A walk callback sees every value but None, with its [`WalkStep`] (field name,
//! index or key, and the access path on demand) and its [`DefRegion`]. A map rebuilds
//! bottom-up, sharing every unchanged subtree; a variable whose definition changes is
//! replaced at its uses too. Cycles end, nesting deeper than 1000 is a RuntimeError, and an
//! `Err` or a panic in a callback ends the call with that error (a panic as a RuntimeError).
use crate::access_path::AccessPath;
use crate::any::{Any, AnyView};
use crate::error::{check, check_ptr, Error, Result};
use crate::object::ObjectRef;
use crate::sys;
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Whether a callback runs before ([`WalkOrder::Pre`]) or after ([`WalkOrder::Post`]) the children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalkOrder {
    /// The callback runs before the children.
    Pre,
    /// The callback runs after the children.
    Post,
}

impl WalkOrder {
    fn raw(self) -> sys::ffk_walk_order {
        match self {
            WalkOrder::Pre => sys::ffk_walk_order::FFK_WALK_PREORDER,
            WalkOrder::Post => sys::ffk_walk_order::FFK_WALK_POSTORDER,
        }
    }
}

/// What a walk callback answers: go into the children, leave them out (pre-order), or
/// end the whole walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalkControl {
    /// Go on, into the value's children.
    Advance,
    /// Go on without the value's children (pre-order; after them it changes nothing).
    Skip,
    /// End the whole walk now.
    Stop,
}

/// The definition region of a position (tvm_ffi's DefRegionKind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefRegion {
    /// An ordinary position: variables met here are uses.
    None,
    /// Under a `def` field (`FieldFlags::S_DEF`) and everything below it.
    Pattern,
    /// Under a `def-simple` field.
    Simple,
}

impl DefRegion {
    fn from_raw(k: sys::ffk_def_region_kind) -> DefRegion {
        match k {
            sys::ffk_def_region_kind::FFK_DEF_REGION_PATTERN => DefRegion::Pattern,
            sys::ffk_def_region_kind::FFK_DEF_REGION_SIMPLE => DefRegion::Simple,
            _ => DefRegion::None,
        }
    }
}

/// Where a walked value sits: the step from its parent. Valid during the callback only.
pub struct WalkStep<'a>(&'a sys::ffk_walk_step);

impl<'a> WalkStep<'a> {
    /// 0 for the root, the parent's + 1 below it.
    pub fn depth(&self) -> i32 {
        self.0.depth
    }

    /// The field's name when the value is a field of an object.
    pub fn field(&self) -> Option<&'a str> {
        if self.0.kind != sys::ffk_access_kind::FFK_ACCESS_ATTR.0 as i32 || self.0.field.is_null() {
            return None;
        }
        // SAFETY: C's field names are NUL-terminated and live as long as the type.
        unsafe { CStr::from_ptr(self.0.field) }.to_str().ok()
    }

    /// The index when the value is an element of an Array, Tuple or List.
    pub fn index(&self) -> Option<i64> {
        (self.0.kind == sys::ffk_access_kind::FFK_ACCESS_ARRAY_ITEM.0 as i32).then_some(self.0.index)
    }

    /// The key when the value is a value of a Map or Dict.
    pub fn key(&self) -> Option<AnyView<'a>> {
        if self.0.kind != sys::ffk_access_kind::FFK_ACCESS_MAP_ITEM.0 as i32 || self.0.key.is_null() {
            return None;
        }
        // SAFETY: the key lives in the container's snapshot for the callback's duration.
        Some(unsafe { AnyView::from_raw(*self.0.key) })
    }

    /// The access path from the root (`<root>.body[1]["k"]`). Fails only when out of memory.
    pub fn path(&self) -> Result<AccessPath> {
        // SAFETY: a valid step chain; a new reference or NULL with the error set.
        let p = check_ptr(unsafe { sys::ffk_walk_step_path(self.0) })?;
        Ok(AccessPath::from_raw_path(p))
    }
}

/// A panic in a callback, as the RuntimeError C passes on; -1.
#[cold]
fn raise_panic(api: &str, panic: Box<dyn std::any::Any + Send>) -> i32 {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    Error::new("RuntimeError", &format!("a {} callback panicked: {}", api, msg)).restore();
    -1
}

/// Walks `root` calling `f(value, step, region)` at every value but None, before or after
/// its children. `Ok(true)` when the walk completed, `Ok(false)` when `f` returned
/// [`WalkControl::Stop`], or the error `f` returned (a panic as a RuntimeError), a
/// RuntimeError for nesting deeper than 1000, a MemoryError.
///
/// ```
/// use ffikit::{structural_walk, Array, WalkControl, WalkOrder};
/// let a: Array<i64> = vec![1, 2, 3].into();
/// let mut seen = vec![];
/// structural_walk(&a, WalkOrder::Post, |v, step, _| {
///     seen.push((v.to::<i64>().ok(), step.index()));
///     Ok(WalkControl::Advance)
/// }).unwrap();
/// assert_eq!(seen, vec![(Some(1), Some(0)), (Some(2), Some(1)), (Some(3), Some(2)), (None, None)]);
/// ```
pub fn structural_walk<'a, F>(root: impl Into<AnyView<'a>>, order: WalkOrder, mut f: F) -> Result<bool>
where
    F: FnMut(AnyView<'_>, &WalkStep<'_>, DefRegion) -> Result<WalkControl>,
{
    unsafe extern "C" fn trampoline<F>(
        ctx: *mut c_void,
        value: *const sys::ffk_any,
        step: *const sys::ffk_walk_step,
        region: sys::ffk_def_region_kind,
    ) -> i32
    where
        F: FnMut(AnyView<'_>, &WalkStep<'_>, DefRegion) -> Result<WalkControl>,
    {
        // SAFETY: ctx is the &mut F below, not otherwise borrowed while C calls back (a walk
        // callback has no handle to re-enter the walk); value and step are valid for the call.
        let f = &mut *(ctx as *mut F);
        let (v, s) = (AnyView::from_raw(*value), WalkStep(&*step));
        match catch_unwind(AssertUnwindSafe(|| f(v, &s, DefRegion::from_raw(region)))) {
            Ok(Ok(WalkControl::Advance)) => sys::FFK_WALK_ADVANCE as i32,
            Ok(Ok(WalkControl::Skip)) => sys::FFK_WALK_SKIP as i32,
            Ok(Ok(WalkControl::Stop)) => sys::FFK_WALK_STOP as i32,
            Ok(Err(e)) => {
                e.restore();
                -1
            }
            Err(panic) => raise_panic("structural_walk", panic),
        }
    }
    let root = root.into();
    // SAFETY: a borrowed valid root, a trampoline matching F, and F alive for the call.
    match unsafe { sys::ffk_structural_walk(root.as_raw(), order.raw(), Some(trampoline::<F>), &mut f as *mut F as *mut c_void) } {
        0 => Ok(true),
        1 => Ok(false),
        _ => Err(Error::fetch()),
    }
}

/// The traversal context a [`structural_visit`] callback receives; valid during the
/// callback only. The callback descends only through it.
pub struct Visitor<'v>(*mut sys::ffk_visitor, PhantomData<&'v ()>);

/// 0 / 1 / -1 of a C visit call as `Ok(true)` (went on), `Ok(false)` (stopped) or the error.
fn visit_result(rc: i32) -> Result<bool> {
    match rc {
        0 => Ok(true),
        1 => Ok(false),
        _ => Err(Error::fetch()),
    }
}

impl<'v> Visitor<'v> {
    /// Visits `value` through the callback (nothing for None). `Ok(false)` when the visit
    /// was stopped below: return [`WalkControl::Stop`] then, to pass the stop on.
    pub fn visit<'a>(&self, value: impl Into<AnyView<'a>>) -> Result<bool> {
        let v = value.into();
        // SAFETY: a live visitor (this handle exists only inside its callback), a valid value.
        visit_result(unsafe { sys::ffk_visitor_visit(self.0, v.as_raw()) })
    }

    /// `value`'s default descent: each child through the callback, in the region its
    /// field declares. Results as [`Visitor::visit`].
    pub fn default_visit<'a>(&self, value: impl Into<AnyView<'a>>) -> Result<bool> {
        let v = value.into();
        // SAFETY: as in `visit`.
        visit_result(unsafe { sys::ffk_visitor_default_visit(self.0, v.as_raw()) })
    }

    /// The definition region of the value being visited.
    pub fn region(&self) -> DefRegion {
        // SAFETY: a live visitor.
        DefRegion::from_raw(unsafe { sys::ffk_visitor_region(self.0) })
    }

    /// Runs `f` with the descent calls inside it in region `kind` (inside a pattern region
    /// nothing changes: a pattern holds for everything below it), then restores the region.
    pub fn in_region<R>(&self, kind: DefRegion, f: impl FnOnce(&Self) -> R) -> R {
        let raw = match kind {
            DefRegion::None => sys::ffk_def_region_kind::FFK_DEF_REGION_NONE,
            DefRegion::Pattern => sys::ffk_def_region_kind::FFK_DEF_REGION_PATTERN,
            DefRegion::Simple => sys::ffk_def_region_kind::FFK_DEF_REGION_SIMPLE,
        };
        // SAFETY: a live visitor; the region is restored before returning, panic or not.
        let previous = unsafe { sys::ffk_visitor_enter_region(self.0, raw) };
        struct Restore(*mut sys::ffk_visitor, sys::ffk_def_region_kind);
        impl Drop for Restore {
            fn drop(&mut self) {
                // SAFETY: the visitor outlives this guard (both live inside one callback).
                unsafe { sys::ffk_visitor_leave_region(self.0, self.1) }
            }
        }
        let _restore = Restore(self.0, previous);
        f(self)
    }
}

/// Visits `root` with a callback that owns the descent: `f(value, visitor)` runs for the
/// root and for every value it passes to [`Visitor::visit`]; [`Visitor::default_visit`]
/// walks a value's children through `f`. `f` returns [`WalkControl::Stop`] to end the
/// whole visit (anything else goes on). `Ok(true)` when the visit completed, `Ok(false)`
/// when stopped, or the errors of [`structural_walk`].
///
/// ```
/// use ffikit::{structural_visit, Array, WalkControl};
/// let a: Array<i64> = vec![1, 2, 3].into();
/// let seen = std::cell::RefCell::new(vec![]);
/// structural_visit(&a, |v, visitor| {
///     if let Ok(i) = v.to::<i64>() {
///         seen.borrow_mut().push(i);
///         return Ok(if i == 2 { WalkControl::Stop } else { WalkControl::Advance });
///     }
///     Ok(if visitor.default_visit(v)? { WalkControl::Advance } else { WalkControl::Stop })
/// }).unwrap();
/// assert_eq!(*seen.borrow(), vec![1, 2]);
/// ```
pub fn structural_visit<'a, F>(root: impl Into<AnyView<'a>>, f: F) -> Result<bool>
where
    F: Fn(AnyView<'_>, &Visitor<'_>) -> Result<WalkControl>,
{
    unsafe extern "C" fn trampoline<F>(
        ctx: *mut c_void,
        visitor: *mut sys::ffk_visitor,
        value: *const sys::ffk_any,
        _step: *const sys::ffk_walk_step,
    ) -> i32
    where
        F: Fn(AnyView<'_>, &Visitor<'_>) -> Result<WalkControl>,
    {
        // SAFETY: ctx is the &F of the running call (shared borrows only: a callback
        // re-enters through its Visitor); value is valid for the call.
        let f = &*(ctx as *const F);
        let (v, handle) = (AnyView::from_raw(*value), Visitor(visitor, PhantomData));
        match catch_unwind(AssertUnwindSafe(|| f(v, &handle))) {
            Ok(Ok(WalkControl::Stop)) => 1,
            Ok(Ok(_)) => 0,
            Ok(Err(e)) => {
                e.restore();
                -1
            }
            Err(panic) => raise_panic("structural_visit", panic),
        }
    }
    let root = root.into();
    // SAFETY: a borrowed valid root, a trampoline matching F, F alive for the call.
    visit_result(unsafe { sys::ffk_structural_visit(root.as_raw(), Some(trampoline::<F>), &f as *const F as *mut c_void) })
}

/// The rewriting context a [`structural_map`] or [`structural_mutate`] callback receives;
/// valid during the callback only.
pub struct Mutator<'m>(*mut sys::ffk_mutator, PhantomData<&'m ()>);

impl<'m> Mutator<'m> {
    /// `value` rewritten as the call does (map: pre, default, post; mutate: the callback).
    pub fn mutate<'a>(&self, value: impl Into<AnyView<'a>>) -> Result<Any> {
        let v = value.into();
        let mut out = crate::any::none_raw();
        // SAFETY: a live mutator (this handle exists only inside its callback), a valid value.
        check(unsafe { sys::ffk_mutator_mutate(self.0, v.as_raw(), &mut out) })?;
        // SAFETY: C gave a new reference.
        Ok(unsafe { Any::from_raw(out) })
    }

    /// `value`'s default rewrite: its children through the callbacks, rebuilt only when one
    /// changed; variables and dag nodes through the remap table.
    pub fn default_mutate<'a>(&self, value: impl Into<AnyView<'a>>) -> Result<Any> {
        let v = value.into();
        let mut out = crate::any::none_raw();
        // SAFETY: as in `mutate`.
        check(unsafe { sys::ffk_mutator_default_mutate(self.0, v.as_raw(), &mut out) })?;
        // SAFETY: C gave a new reference.
        Ok(unsafe { Any::from_raw(out) })
    }

    /// The replacement recorded for `var` (an object), if any. A TypeError for a non-object.
    pub fn var_remap_get(&self, var: &ObjectRef) -> Result<Option<Any>> {
        let v = AnyView::from_object(var);
        let mut out = crate::any::none_raw();
        // SAFETY: as in `mutate`; 1 found, 0 not, -1 error.
        match unsafe { sys::ffk_mutator_var_remap_get(self.0, v.as_raw(), &mut out) } {
            1 => Ok(Some(unsafe { Any::from_raw(out) })),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Records `value` as the replacement for `var`, replacing an earlier one.
    pub fn var_remap_set<'a>(&self, var: &ObjectRef, value: impl Into<AnyView<'a>>) -> Result<()> {
        let (k, v) = (AnyView::from_object(var), value.into());
        // SAFETY: as in `mutate`.
        check(unsafe { sys::ffk_mutator_var_remap_set(self.0, k.as_raw(), v.as_raw()) })
    }

    /// The definition region of the value being rewritten.
    pub fn region(&self) -> DefRegion {
        // SAFETY: a live mutator.
        DefRegion::from_raw(unsafe { sys::ffk_mutator_region(self.0) })
    }
}

/// `f` behind C's ffk_map_fn. `F: Fn`: a callback re-enters through its Mutator.
unsafe extern "C" fn map_trampoline<F>(ctx: *mut c_void, m: *mut sys::ffk_mutator, value: *const sys::ffk_any, out: *mut sys::ffk_any) -> i32
where
    F: Fn(AnyView<'_>, &Mutator<'_>) -> Result<Any>,
{
    // SAFETY: ctx is the &F of the running call (shared borrows only); the rest is valid for the call.
    let f = &*(ctx as *const F);
    let (v, handle) = (AnyView::from_raw(*value), Mutator(m, PhantomData));
    match catch_unwind(AssertUnwindSafe(|| f(v, &handle))) {
        Ok(Ok(r)) => {
            *out = r.into_raw();
            0
        }
        Ok(Err(e)) => {
            e.restore();
            -1
        }
        Err(panic) => raise_panic("structural_map", panic),
    }
}

/// Maps `root`: `mutate(x) = post(default(pre(x)))` with `f` as the pre or post callback,
/// run at every value (None included); it returns the value itself (unchanged) or a
/// replacement. Unchanged subtrees, and an unchanged root, come back as the same objects;
/// Lists and Dicts are copied on write; the source never changes. Errors as
/// [`structural_walk`], and a TypeError naming a field that cannot be rebuilt.
///
/// ```
/// use ffikit::{structural_map, Any, Array, WalkOrder};
/// let a: Array<i64> = vec![1, 2].into();
/// let b = structural_map(&a, WalkOrder::Post, |v, _| {
///     Ok(match v.to::<i64>() { Ok(i) => Any::from(i * 10), Err(_) => v.to_any() })
/// }).unwrap();
/// assert_eq!(format!("{}", b), "(10, 20)");
/// ```
pub fn structural_map<'a, F>(root: impl Into<AnyView<'a>>, order: WalkOrder, f: F) -> Result<Any>
where
    F: Fn(AnyView<'_>, &Mutator<'_>) -> Result<Any>,
{
    let root = root.into();
    let mut out = crate::any::none_raw();
    // SAFETY: a borrowed valid root, a trampoline matching F, F alive for the call.
    check(unsafe {
        sys::ffk_structural_map(root.as_raw(), order.raw(), Some(map_trampoline::<F>), &f as *const F as *mut c_void, &mut out)
    })?;
    // SAFETY: C gave a new reference.
    Ok(unsafe { Any::from_raw(out) })
}

/// Rewrites `root` with a callback that owns the rewrite: `f` runs for the root and every
/// value it passes to [`Mutator::mutate`]; [`Mutator::default_mutate`] gives a value's
/// default rewrite. Results and errors as [`structural_map`].
pub fn structural_mutate<'a, F>(root: impl Into<AnyView<'a>>, f: F) -> Result<Any>
where
    F: Fn(AnyView<'_>, &Mutator<'_>) -> Result<Any>,
{
    let root = root.into();
    let mut out = crate::any::none_raw();
    // SAFETY: as in `structural_map`.
    check(unsafe { sys::ffk_structural_mutate(root.as_raw(), Some(map_trampoline::<F>), &f as *const F as *mut c_void, &mut out) })?;
    // SAFETY: C gave a new reference.
    Ok(unsafe { Any::from_raw(out) })
}
