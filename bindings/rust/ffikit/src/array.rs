//! `Array<T>` and `Tuple`: copy-on-write sequences. Mutators take `&mut self`; when the
//! object is shared, C copies it first, so a clone never sees a change.
use crate::any::{in_chunks, Any, AnyView, Element};
use crate::elemref::ElementRef;
use crate::error::{check, check_ptr, Error, Result};
use crate::object::{container_handle, object_handle, ObjectRef};
use crate::sys;
use std::marker::PhantomData;

/// A copy-on-write sequence of `T` (default `Any`, i.e. untyped).
///
/// Every element is a `T`: pushes convert to a value, and a downcast from an untyped
/// object checks every element once (a TypeError naming the first bad one).
///
/// ```
/// use ffikit::Array;
/// let mut a: Array<i64> = Array::new().unwrap();
/// a.push(1).unwrap();
/// a.push(2).unwrap();
/// let b = a.clone();          // retains: both handles share one object
/// a.set(0, 10).unwrap();      // copy-on-write: `b` is unchanged
/// assert_eq!((a[0], b[0]), (10, 1));
/// assert_eq!(a.iter().sum::<i64>(), 12);
/// assert_eq!(a.to_string(), "(10, 2)");
/// let v: Vec<i64> = b.into();
/// assert_eq!(v, vec![1, 2]);
/// ```
#[repr(transparent)]
pub struct Array<T: Element = Any>(pub(crate) ObjectRef, PhantomData<fn() -> T>);

/// Checks every element of an Array/Tuple object against `T` (C's TypeError text).
pub(crate) fn check_items<T: Element>(items: &[sys::ffk_any], what: &str) -> Result<()> {
    for (i, v) in items.iter().enumerate() {
        if !T::accepts(v) {
            let e = T::from_view(v).err().unwrap_or_else(|| crate::object::type_error(&T::schema(), v));
            return Err(Error::new(e.kind().as_str(), &format!("{} item #{}: {}", what, i, e.message())));
        }
    }
    Ok(())
}

container_handle!(Array<T>, FFK_TYPE_ARRAY);

impl<T: Element> Array<T> {
    fn check_elements(&self) -> Result<()> {
        check_items::<T>(self.raw_items(), "Array")
    }

    fn raw(&self) -> *mut sys::ffk_array {
        self.0.as_ptr().cast()
    }

    /// Runs a C copy-on-write mutator on the handle's address, storing what it leaves there.
    fn cow(&mut self, f: impl FnOnce(*mut *mut sys::ffk_array) -> i32) -> Result<()> {
        let mut raw = self.raw();
        let rc = f(&mut raw);
        // SAFETY: the mutator leaves a valid handle in `raw` (ours, maybe moved or copied).
        // SAFETY: the mutator took care of the old reference (kept, moved or released).
        unsafe { self.0.set_raw(raw.cast()) };
        check(rc)
    }

    /// A new empty Array.
    pub fn new() -> Result<Self> {
        Self::with_capacity(0)
    }

    /// A new empty Array with room for `n` elements.
    ///
    /// ```
    /// let mut a: ffikit::Array<i64> = ffikit::Array::with_capacity(8).unwrap();
    /// a.push(1).unwrap();
    /// assert_eq!(a.len(), 1);
    /// ```
    pub fn with_capacity(n: usize) -> Result<Self> {
        // SAFETY: returns a new reference or NULL.
        check_ptr(unsafe { sys::ffk_array_with_capacity(n as i64) }).map(Array::wrap)
    }

    /// The stored values, borrowed (valid while `self` is borrowed: mutation needs `&mut`).
    pub(crate) fn raw_items(&self) -> &[sys::ffk_any] {
        // SAFETY: data/size are the live array's own elements; the header fields are read
        // directly, as the C inline helpers do (the layout tests vouch for the offsets).
        unsafe {
            let a = self.raw();
            if (*a).size == 0 {
                &[]
            } else {
                std::slice::from_raw_parts((*a).data, (*a).size as usize)
            }
        }
    }

    /// The elements as borrowed values.
    ///
    /// ```
    /// let a: ffikit::Array<i64> = vec![1, 2].into();
    /// assert_eq!(a.as_views()[1].to::<i64>().unwrap(), 2);
    /// ```
    pub fn as_views(&self) -> &[AnyView<'_>] {
        let items = self.raw_items();
        // SAFETY: AnyView is repr(transparent) over ffk_any; the items live while &self does.
        unsafe { AnyView::slice_from_raw(items.as_ptr(), items.len()) }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        // SAFETY: reads the live array's size field.
        unsafe { (*self.raw()).size as usize }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `index` (negative counts from the end), or C's IndexError
    /// "Array index 7 out of range for size 3".
    ///
    /// ```
    /// let a: ffikit::Array<i64> = vec![1, 2, 3].into();
    /// assert_eq!((a.get(0).unwrap(), a.get(-1).unwrap()), (1, 3));
    /// assert_eq!(a.get(3).unwrap_err().to_string(), "IndexError: Array index 3 out of range for size 3");
    /// ```
    pub fn get(&self, index: i64) -> Result<T> {
        let items = self.raw_items();
        let i = if index < 0 { index + items.len() as i64 } else { index };
        if i >= 0 && (i as usize) < items.len() {
            return T::from_view(&items[i as usize]);
        }
        let mut out = crate::any::none_raw();
        // SAFETY: the C call raises the IndexError with its own text.
        check(unsafe { sys::ffk_array_get(self.raw(), index, &mut out) })?;
        T::from_view(&Any(out).0)
    }

    /// Replaces element `index`.
    ///
    /// ```
    /// let mut a: ffikit::Array<String> = vec!["a".to_string()].into();
    /// let b = a.clone();
    /// a.set(0, "z".into()).unwrap();
    /// assert_eq!((a.get(0).unwrap(), b.get(0).unwrap()), ("z".to_string(), "a".to_string()));
    /// ```
    pub fn set(&mut self, index: i64, value: T) -> Result<()> {
        let v = value.into_any()?;
        // SAFETY: a valid handle address and a borrowed value.
        self.cow(|a| unsafe { sys::ffk_array_set(a, index, v.as_raw()) })
    }

    /// Appends `value`.
    ///
    /// ```
    /// let mut a: ffikit::Array<f64> = ffikit::Array::new().unwrap();
    /// a.push(0.5).unwrap();
    /// assert_eq!(a.to_vec(), vec![0.5]);
    /// ```
    #[inline]
    pub fn push(&mut self, value: T) -> Result<()> {
        let mut v = value.into_any()?.into_raw();
        // SAFETY: push_steal consumes v, even on failure.
        self.cow(|a| unsafe { sys::ffk_array_push_steal(a, &mut v) })
    }

    /// Removes and returns the last element (IndexError "pop from empty Array").
    ///
    /// ```
    /// let mut a: ffikit::Array<i64> = vec![1, 2].into();
    /// assert_eq!(a.pop().unwrap(), 2);
    /// assert_eq!(a.len(), 1);
    /// ```
    pub fn pop(&mut self) -> Result<T> {
        self.remove(-1)
    }

    /// Removes and returns element `index` (negative counts from the end).
    ///
    /// ```
    /// let mut a: ffikit::Array<i64> = vec![1, 2, 3].into();
    /// assert_eq!(a.remove(0).unwrap(), 1);
    /// assert_eq!(a.to_vec(), vec![2, 3]);
    /// ```
    pub fn remove(&mut self, index: i64) -> Result<T> {
        let mut out = crate::any::none_raw();
        // SAFETY: `out` receives an owned value.
        self.cow(|a| unsafe { sys::ffk_array_pop(a, index, &mut out) })?;
        T::from_view(&Any(out).0)
    }

    /// Inserts `value` before `index` (clamped as in Python's list.insert).
    ///
    /// ```
    /// let mut a: ffikit::Array<i64> = vec![1, 3].into();
    /// a.insert(1, 2).unwrap();
    /// a.insert(100, 4).unwrap(); // clamped, as in Python
    /// assert_eq!(a.to_vec(), vec![1, 2, 3, 4]);
    /// ```
    pub fn insert(&mut self, index: i64, value: T) -> Result<()> {
        let v = value.into_any()?;
        // SAFETY: as for set.
        self.cow(|a| unsafe { sys::ffk_array_insert(a, index, v.as_raw()) })
    }

    /// Removes every element.
    ///
    /// ```
    /// let mut a: ffikit::Array<i64> = vec![1].into();
    /// a.clear().unwrap();
    /// assert!(a.is_empty());
    /// ```
    pub fn clear(&mut self) -> Result<()> {
        let n = self.len() as i64;
        // SAFETY: a valid range.
        self.cow(|a| unsafe { sys::ffk_array_erase(a, 0, n) })
    }

    /// Makes room for `capacity` elements in all (unshares).
    pub fn reserve(&mut self, capacity: usize) -> Result<()> {
        // SAFETY: plain call.
        self.cow(|a| unsafe { sys::ffk_array_reserve(a, capacity as i64) })
    }

    /// Appends every value of `iter`, stopping at the first error.
    ///
    /// ```
    /// let mut a: ffikit::Array<i64> = ffikit::Array::new().unwrap();
    /// a.try_extend(0..1000).unwrap();
    /// assert_eq!(a.len(), 1000);
    /// ```
    pub fn try_extend<I: IntoIterator<Item = T>>(&mut self, iter: I) -> Result<()> {
        let iter = iter.into_iter();
        if iter.size_hint().0 > 0 {
            self.reserve(self.len() + iter.size_hint().0)?;
        }
        // SAFETY: Any is repr(transparent) over ffk_any; C copies the borrowed values.
        in_chunks(iter, |c| self.cow(|a| unsafe { sys::ffk_array_extend(a, c.as_ptr().cast(), c.len() as i64) }))
    }

    /// True when some element is key-equal (C's `ffk_any_equal`) to `value`.
    ///
    /// ```
    /// let a: ffikit::Array<i64> = vec![1, 2].into();
    /// assert!(a.contains(&2) && !a.contains(&3));
    /// ```
    pub fn contains(&self, value: &T) -> bool {
        match value.clone().into_any() {
            // SAFETY: borrowed values.
            Ok(v) => unsafe { sys::ffk_array_contains(self.raw(), v.as_raw()) },
            Err(_) => false,
        }
    }

    /// Iterates over the elements, converted to `T`.
    ///
    /// ```
    /// let a: ffikit::Array<i64> = vec![1, 2, 3].into();
    /// assert_eq!(a.iter().map(|x| x * 2).collect::<Vec<_>>(), vec![2, 4, 6]);
    /// ```
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { items: self.raw_items().iter(), _t: PhantomData }
    }

    /// The elements in a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// The elements as a shared `List<T>`.
    ///
    /// ```
    /// let a: ffikit::Array<i64> = vec![1].into();
    /// let l = a.to_list().unwrap();
    /// l.push(2).unwrap();
    /// assert_eq!((a.len(), l.len()), (1, 2));
    /// ```
    pub fn to_list(&self) -> Result<crate::List<T>> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_list_from_array(self.raw()) }).map(crate::List::wrap)
    }
}

impl<T: ElementRef> std::ops::Index<usize> for Array<T> {
    type Output = T;
    /// Panics when `index` is out of range, or when the stored value converts to `T` but
    /// is not stored as one (a `true` in an `Array<i64>`): use `get` for those.
    fn index(&self, index: usize) -> &T {
        let items = self.raw_items();
        let v = items
            .get(index)
            .unwrap_or_else(|| panic!("Array index {} out of range for size {}", index, items.len()));
        T::ref_from(v).unwrap_or_else(|| panic!("Array item #{} is not stored as {}", index, T::schema()))
    }
}

/// The iterator of `Array::iter`.
pub struct Iter<'a, T> {
    items: std::slice::Iter<'a, sys::ffk_any>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Element> Iterator for Iter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        // Every element was checked on entry, so the conversion cannot fail.
        self.items.next().map(T::from_accepted)
    }
    #[inline]
    fn fold<B, F: FnMut(B, T) -> B>(self, init: B, mut f: F) -> B {
        self.items.fold(init, |acc, v| f(acc, T::from_accepted(v)))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}
impl<T: Element> ExactSizeIterator for Iter<'_, T> {}

impl<'a, T: Element> IntoIterator for &'a Array<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

crate::object::collection_impls!(seq Array);

impl<T: Element> From<Array<T>> for Vec<T> {
    fn from(a: Array<T>) -> Vec<T> {
        a.to_vec()
    }
}

object_handle!(
    /// A Tuple: a fixed-size sequence with copy-on-write `set`.
    ///
    /// ```
    /// use ffikit::{Any, Tuple};
    /// let mut t = Tuple::new(&[Any::from(1i64), Any::from("x")]).unwrap();
    /// let u = t.clone();
    /// t.set(0, Any::from(2i64)).unwrap();
    /// assert_eq!((t.to_string(), u.to_string()), ("(2, \"x\")".to_string(), "(1, \"x\")".to_string()));
    /// ```
    Tuple, FFK_TYPE_TUPLE, "Tuple"
);

impl Tuple {
    /// A new Tuple of copies of `items`.
    pub fn new(items: &[Any]) -> Result<Tuple> {
        // SAFETY: Any is repr(transparent) over ffk_any; items are borrowed.
        check_ptr(unsafe { sys::ffk_tuple_new(items.len() as i64, items.as_ptr().cast()) }).map(Tuple)
    }
    fn raw(&self) -> *mut sys::ffk_array {
        self.0.as_ptr().cast()
    }
    /// The number of elements.
    pub fn len(&self) -> usize {
        // SAFETY: reads the live tuple's size.
        unsafe { (*self.raw()).size as usize }
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The elements, borrowed.
    ///
    /// ```
    /// let t = ffikit::Tuple::new(&[ffikit::Any::from(1i64)]).unwrap();
    /// assert_eq!(t.as_slice()[0].to::<i64>().unwrap(), 1);
    /// ```
    pub fn as_slice(&self) -> &[Any] {
        // SAFETY: the live tuple's elements; Any is repr(transparent) over ffk_any.
        unsafe {
            let a = self.raw();
            if (*a).size == 0 {
                &[]
            } else {
                std::slice::from_raw_parts((*a).data.cast(), (*a).size as usize)
            }
        }
    }
    /// Replaces element `index` (copy-on-write).
    pub fn set(&mut self, index: i64, value: Any) -> Result<()> {
        let mut raw = self.raw();
        // SAFETY: a valid handle address; the handle left there is ours.
        let rc = unsafe { sys::ffk_tuple_set(&mut raw, index, value.as_raw()) };
        // SAFETY: the mutator took care of the old reference.
        unsafe { self.0.set_raw(raw.cast()) };
        check(rc)
    }
}

impl std::ops::Index<usize> for Tuple {
    type Output = Any;
    fn index(&self, i: usize) -> &Any {
        &self.as_slice()[i]
    }
}
