//! `List<T>`: a shared, mutable sequence. Every operation is atomic in C (a per-object
//! lock), so mutators take `&self` and every clone sees every change.
use crate::any::{none_raw, owned_values, Any, Element};
use crate::array::{check_items, Array};
use crate::error::{check, check_ptr, iter_step, Error, Result};
use crate::object::{container_handle, ObjectRef, ObjectType};
use crate::sys;
use std::marker::PhantomData;

/// A shared mutable sequence of `T` (default `Any`).
///
/// ```
/// use ffikit::List;
/// let l: List<i64> = List::new().unwrap();
/// let alias = l.clone();            // the same List
/// l.push(1).unwrap();
/// alias.push(2).unwrap();           // `&self`: shared mutation
/// assert_eq!(l.to_vec().unwrap(), vec![1, 2]);
/// assert_eq!(l.get(-1).unwrap(), 2);
/// assert_eq!(l.get(5).unwrap_err().to_string(), "IndexError: List index 5 out of range for size 2");
/// ```
#[repr(transparent)]
pub struct List<T: Element = Any>(pub(crate) ObjectRef, PhantomData<fn() -> T>);

container_handle!(List<T>, FFK_TYPE_LIST);

impl<T: Element> List<T> {
    /// Checks the elements present now; since other handles may add any value later,
    /// reads check each element again on the way out.
    fn check_elements(&self) -> Result<()> {
        check_items::<T>(self.snapshot()?.raw_items(), "List")
    }

    fn raw(&self) -> *mut sys::ffk_list {
        self.0.as_ptr().cast()
    }

    /// A new empty List.
    pub fn new() -> Result<Self> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_list_new() }).map(List::wrap)
    }

    /// A new empty List with room for `n` elements.
    pub fn with_capacity(n: usize) -> Result<Self> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_list_with_capacity(n as i64) }).map(List::wrap)
    }

    /// The number of elements now.
    pub fn len(&self) -> usize {
        // SAFETY: a valid handle.
        unsafe { sys::ffk_list_size(self.raw()) as usize }
    }

    /// True when empty now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `index` (negative counts from the end); IndexError or TypeError.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![5, 6].into();
    /// assert_eq!(l.get(-1).unwrap(), 6);
    /// ```
    pub fn get(&self, index: i64) -> Result<T> {
        let mut out = none_raw();
        // SAFETY: out receives a new reference.
        check(unsafe { sys::ffk_list_get(self.raw(), index, &mut out) })?;
        T::from_view(&Any(out).0)
    }

    /// Replaces element `index`.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![5].into();
    /// let alias = l.clone();
    /// l.set(0, 7).unwrap();
    /// assert_eq!(alias.get(0).unwrap(), 7);
    /// ```
    pub fn set(&self, index: i64, value: T) -> Result<()> {
        let v = value.into_any()?;
        // SAFETY: borrowed value.
        check(unsafe { sys::ffk_list_set(self.raw(), index, v.as_raw()) })
    }

    /// Appends `value`.
    ///
    /// ```
    /// let l: ffikit::List<String> = ffikit::List::new().unwrap();
    /// l.push("x".into()).unwrap();
    /// assert_eq!(l.len(), 1);
    /// ```
    #[inline]
    pub fn push(&self, value: T) -> Result<()> {
        let mut v = value.into_any()?.into_raw();
        // SAFETY: append_steal consumes v, even on failure.
        check(unsafe { sys::ffk_list_append_steal(self.raw(), &mut v) })
    }

    /// Inserts `value` before `index` (clamped).
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![2].into();
    /// l.insert(0, 1).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![1, 2]);
    /// ```
    pub fn insert(&self, index: i64, value: T) -> Result<()> {
        let v = value.into_any()?;
        // SAFETY: borrowed value.
        check(unsafe { sys::ffk_list_insert(self.raw(), index, v.as_raw()) })
    }

    /// Removes and returns element `index` (-1: the last).
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1, 2].into();
    /// assert_eq!(l.pop(-1).unwrap(), 2);
    /// assert_eq!(l.pop(5).unwrap_err().kind(), "IndexError");
    /// ```
    pub fn pop(&self, index: i64) -> Result<T> {
        let mut out = none_raw();
        // SAFETY: out receives an owned value.
        check(unsafe { sys::ffk_list_pop(self.raw(), index, &mut out) })?;
        T::from_view(&Any(out).0)
    }

    /// Removes every element.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1].into();
    /// l.clear().unwrap();
    /// assert!(l.is_empty());
    /// ```
    pub fn clear(&self) -> Result<()> {
        // SAFETY: a valid handle.
        check(unsafe { sys::ffk_list_clear(self.raw()) })
    }

    /// Reverses in place.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1, 2].into();
    /// l.reverse().unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![2, 1]);
    /// ```
    pub fn reverse(&self) -> Result<()> {
        // SAFETY: a valid handle.
        check(unsafe { sys::ffk_list_reverse(self.raw()) })
    }

    /// True when some element is key-equal to `value`.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1].into();
    /// assert!(l.contains(&1));
    /// ```
    pub fn contains(&self, value: &T) -> bool {
        match value.clone().into_any() {
            // SAFETY: borrowed value.
            Ok(v) => unsafe { sys::ffk_list_contains(self.raw(), v.as_raw()) },
            Err(_) => false,
        }
    }

    /// Appends every value, all or nothing, in one atomic step (as Python's `List.extend`):
    /// every value is converted first, so when one fails the List is unchanged, and no
    /// other handle, thread or language ever sees part of them appended.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1].into();
    /// l.try_extend(2..=4).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![1, 2, 3, 4]);
    /// ```
    pub fn try_extend<I: IntoIterator<Item = T>>(&self, iter: I) -> Result<()> {
        let values = owned_values(iter)?;
        // SAFETY: Any is repr(transparent) over ffk_any; C copies the borrowed values.
        check(unsafe { sys::ffk_list_extend(self.raw(), values.as_ptr().cast(), values.len() as i64) })
    }

    /// The elements `self[start:stop:step]` with Python's slice rules, read in one atomic
    /// step and converted to `T`. C normalises the bounds against the size at that moment:
    /// negative ones count from the end, out-of-range ones are clamped, so `i64::MAX` and
    /// `i64::MIN` stand for an open end (`l[::-1]` is `slice(i64::MAX, i64::MIN, -1)`).
    /// A step of 0 is a ValueError.
    ///
    /// ```
    /// let l: ffikit::List<i64> = (0..6).collect();
    /// assert_eq!(l.slice(1, i64::MAX, 2).unwrap(), vec![1, 3, 5]);
    /// assert_eq!(l.slice(i64::MAX, i64::MIN, -2).unwrap(), vec![5, 3, 1]);
    /// assert_eq!(l.slice(0, 1, 0).unwrap_err().to_string(), "ValueError: slice step cannot be zero");
    /// ```
    pub fn slice(&self, start: i64, stop: i64, step: i64) -> Result<Vec<T>> {
        // SAFETY: a new reference or NULL.
        let a = check_ptr(unsafe { sys::ffk_list_slice(self.raw(), start, stop, step) })?;
        let a: Array<Any> = Array::from_object(a)?;
        a.as_views().iter().map(|v| v.to::<T>()).collect()
    }

    /// `self[start:stop:step] = values` with Python's rules, in one atomic step (bounds as
    /// in `slice`): with step 1 the slice may change length; with any other step there
    /// must be exactly as many values as it selects, else a ValueError "attempt to assign
    /// sequence of size 3 to extended slice of size 2". On any error the List is unchanged.
    ///
    /// ```
    /// let l: ffikit::List<i64> = (0..6).collect();
    /// l.set_slice(0, i64::MAX, 2, [10, 12, 14]).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![10, 1, 12, 3, 14, 5]);
    /// l.set_slice(1, 5, 1, [7]).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![10, 7, 5]);
    /// let e = l.set_slice(i64::MAX, i64::MIN, -1, [1, 2]).unwrap_err();
    /// assert_eq!(e.to_string(), "ValueError: attempt to assign sequence of size 2 to extended slice of size 3");
    /// ```
    pub fn set_slice<I: IntoIterator<Item = T>>(&self, start: i64, stop: i64, step: i64, values: I) -> Result<()> {
        let values = owned_values(values)?;
        // SAFETY: Any is repr(transparent) over ffk_any; C copies the borrowed values.
        check(unsafe {
            sys::ffk_list_set_slice_step(self.raw(), start, stop, step, values.as_ptr().cast(), values.len() as i64)
        })
    }

    /// `self[start:stop:step] = other[:]` from another List (or this one, read as it was:
    /// `l.set_slice_from(i64::MAX, i64::MIN, -1, &l)` reverses it), in one atomic step
    /// that locks both.
    ///
    /// ```
    /// let l: ffikit::List<i64> = (0..4).collect();
    /// l.set_slice_from(i64::MAX, i64::MIN, -1, &l).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![3, 2, 1, 0]);
    /// ```
    pub fn set_slice_from(&self, start: i64, stop: i64, step: i64, other: &List<T>) -> Result<()> {
        // SAFETY: both handles are valid; C reads `other` under its lock.
        check(unsafe { sys::ffk_list_set_slice_step_from(self.raw(), start, stop, step, other.0.as_ptr()) })
    }

    /// `del self[start:stop:step]` with Python's rules, in one atomic step (bounds as in
    /// `slice`). A step of 0 is a ValueError.
    ///
    /// ```
    /// let l: ffikit::List<i64> = (0..7).collect();
    /// l.delete_slice(0, i64::MAX, 3).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![1, 2, 4, 5]);
    /// l.delete_slice(-1, i64::MIN, -2).unwrap();
    /// assert_eq!(l.to_vec().unwrap(), vec![1, 4]);
    /// ```
    pub fn delete_slice(&self, start: i64, stop: i64, step: i64) -> Result<()> {
        // SAFETY: a valid handle.
        check(unsafe { sys::ffk_list_erase_slice(self.raw(), start, stop, step) })
    }

    /// A consistent snapshot of the elements as an Array (untyped: other handles may have
    /// stored any value).
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1].into();
    /// let snap = l.snapshot().unwrap();
    /// l.push(2).unwrap();
    /// assert_eq!(snap.len(), 1);
    /// ```
    pub fn snapshot(&self) -> Result<Array<Any>> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_list_to_array(self.raw()) }).map(|o| Array::from_object(o).unwrap())
    }

    /// The elements now, converted to `T` (a TypeError when another handle stored
    /// something else).
    ///
    /// ```
    /// let l: ffikit::List<i64> = (1..=3).collect();
    /// assert_eq!(l.to_vec().unwrap(), vec![1, 2, 3]);
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.snapshot()?.as_views().iter().map(|v| v.to::<T>()).collect()
    }

    /// Iterates; yields an `Err` (RuntimeError "List changed during iteration") and then
    /// stops if the List's shape changes meanwhile, from any thread.
    ///
    /// ```
    /// let l: ffikit::List<i64> = vec![1, 2].into();
    /// let sum: i64 = l.iter().map(|x| x.unwrap()).sum();
    /// assert_eq!(sum, 3);
    /// ```
    pub fn iter(&self) -> ListIter<'_, T> {
        let mut it = sys::ffk_list_iter { list: std::ptr::null_mut(), index: 0, version: 0 };
        // SAFETY: the iterator borrows the List, which `'_` keeps alive.
        unsafe { sys::ffk_list_iter_init(&mut it, self.raw()) };
        ListIter { it, done: false, _l: PhantomData }
    }
}

/// The iterator of `List::iter`.
pub struct ListIter<'a, T: Element> {
    it: sys::ffk_list_iter,
    done: bool,
    _l: PhantomData<&'a List<T>>,
}

impl<T: Element> Iterator for ListIter<'_, T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        let mut out = none_raw();
        // SAFETY: a live iterator over a live List.
        let rc = unsafe { sys::ffk_list_iter_next(&mut self.it, &mut out) };
        iter_step(&mut self.done, rc, || T::from_view(&Any(out).0))
    }
}

impl<'a, T: Element> IntoIterator for &'a List<T> {
    type Item = Result<T>;
    type IntoIter = ListIter<'a, T>;
    fn into_iter(self) -> ListIter<'a, T> {
        self.iter()
    }
}

crate::object::collection_impls!(seq List);

impl<T: Element> TryFrom<List<T>> for Vec<T> {
    type Error = Error;
    fn try_from(l: List<T>) -> Result<Vec<T>> {
        l.to_vec()
    }
}
