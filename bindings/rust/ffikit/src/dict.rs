//! `Dict<K, V>`: a shared, mutable mapping in insertion order. Every operation is atomic
//! in C, so mutators take `&self` and every clone sees every change.
use crate::any::{none_raw, Any, Element};
use crate::error::{check, check_ptr, iter_step, Error, Result};
use crate::array::Array;
use crate::map::{check_pairs, Map};
use crate::object::{container_handle, ObjectRef, ObjectType};
use crate::sys;
use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

/// A shared mutable mapping from `K` to `V` in insertion order.
///
/// ```
/// use ffikit::Dict;
/// let d: Dict<i64, String> = Dict::new().unwrap();
/// let alias = d.clone();
/// d.insert(2, "two".into()).unwrap();
/// alias.insert(1, "one".into()).unwrap();
/// assert_eq!(d.get(&1).unwrap(), Some("one".to_string()));
/// assert_eq!(d.keys().unwrap(), vec![2, 1]);
/// assert_eq!(d.remove(&2).unwrap(), Some("two".to_string()));
/// assert_eq!(alias.len(), 1);
/// ```
#[repr(transparent)]
pub struct Dict<K: Element = Any, V: Element = Any>(pub(crate) ObjectRef, PhantomData<fn() -> (K, V)>);

container_handle!(Dict<K, V>, FFK_TYPE_DICT);

impl<K: Element, V: Element> Dict<K, V> {
    /// Checks the entries present now; reads check again on the way out, since other
    /// handles may store anything later.
    fn check_elements(&self) -> Result<()> {
        check_pairs::<K, V>("Dict", self.snapshot()?.raw_iter())
    }

    fn raw(&self) -> *mut sys::ffk_dict {
        self.0.as_ptr().cast()
    }

    /// A new empty Dict.
    pub fn new() -> Result<Self> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_dict_new() }).map(Dict::wrap)
    }

    /// The number of entries now.
    pub fn len(&self) -> usize {
        // SAFETY: a valid handle.
        unsafe { sys::ffk_dict_size(self.raw()) as usize }
    }

    /// True when empty now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key` now, if present (a TypeError when another handle stored a
    /// value that is not a `V`).
    ///
    /// ```
    /// let d: ffikit::Dict<String, i64> = vec![("a".to_string(), 1)].into();
    /// assert_eq!(d.get(&"a".to_string()).unwrap(), Some(1));
    /// ```
    pub fn get(&self, key: &K) -> Result<Option<V>> {
        let k = key.clone().into_any()?;
        let mut out = none_raw();
        // SAFETY: borrowed key; out receives a new reference.
        match unsafe { sys::ffk_dict_get(self.raw(), k.as_raw(), &mut out) } {
            1 => V::from_view(&Any(out).0).map(Some),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// True when `key` is present now.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(1, 1)].into();
    /// assert!(d.contains_key(&1));
    /// ```
    pub fn contains_key(&self, key: &K) -> bool {
        match key.clone().into_any() {
            // SAFETY: borrowed key.
            Ok(k) => unsafe { sys::ffk_dict_contains(self.raw(), k.as_raw()) },
            Err(_) => false,
        }
    }

    /// Sets `key` to `value`.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = ffikit::Dict::new().unwrap();
    /// let alias = d.clone();
    /// d.insert(1, 2).unwrap();
    /// assert_eq!(alias.get(&1).unwrap(), Some(2));
    /// ```
    pub fn insert(&self, key: K, value: V) -> Result<()> {
        let (k, v) = (key.into_any()?, value.into_any()?);
        // SAFETY: borrowed key and value.
        check(unsafe { sys::ffk_dict_set(self.raw(), k.as_raw(), v.as_raw()) })
    }

    /// Removes `key`, returning its value if it was present.
    pub fn remove(&self, key: &K) -> Result<Option<V>> {
        let k = key.clone().into_any()?;
        let (dflt, mut out) = (none_raw(), none_raw());
        // SAFETY: borrowed key and default; out receives an owned value.
        match unsafe { sys::ffk_dict_pop_default(self.raw(), k.as_raw(), &dflt, &mut out) } {
            1 => V::from_view(&Any(out).0).map(Some),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Removes every entry.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(1, 1)].into();
    /// d.clear().unwrap();
    /// assert!(d.is_empty());
    /// ```
    pub fn clear(&self) -> Result<()> {
        // SAFETY: a valid handle.
        check(unsafe { sys::ffk_dict_clear(self.raw()) })
    }

    /// A consistent snapshot as an untyped Map.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(1, 1)].into();
    /// let m = d.snapshot().unwrap();
    /// d.clear().unwrap();
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn snapshot(&self) -> Result<Map<Any, Any>> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_dict_to_map(self.raw()) }).map(|o| Map::from_object(o).unwrap())
    }

    /// One part of every entry (C's `ffk_map_part`), snapshotted in one atomic step.
    fn collect<T: Element>(&self, part: sys::ffk_map_part) -> Result<Vec<T>> {
        // SAFETY: a new reference or NULL.
        let a = check_ptr(unsafe { sys::ffk_dict_collect(self.raw(), part) })?;
        let a: Array<Any> = Array::from_object(a)?;
        a.as_views().iter().map(|v| v.to::<T>()).collect()
    }

    /// The keys now, in insertion order.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(3, 30), (1, 10)].into();
    /// assert_eq!(d.keys().unwrap(), vec![3, 1]);
    /// ```
    pub fn keys(&self) -> Result<Vec<K>> {
        self.collect(sys::ffk_map_part::FFK_MAP_KEYS)
    }

    /// The values now, in insertion order.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(3, 30), (1, 10)].into();
    /// assert_eq!(d.values().unwrap(), vec![30, 10]);
    /// ```
    pub fn values(&self) -> Result<Vec<V>> {
        self.collect(sys::ffk_map_part::FFK_MAP_VALUES)
    }

    /// The (key, value) pairs now, in insertion order.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(3, 30), (1, 10)].into();
    /// assert_eq!(d.to_vec().unwrap(), vec![(3, 30), (1, 10)]);
    /// ```
    pub fn to_vec(&self) -> Result<Vec<(K, V)>> {
        self.snapshot()?.raw_iter().map(|(k, v)| Ok((K::from_view(k)?, V::from_view(v)?))).collect()
    }

    /// Inserts every pair, stopping at the first error.
    pub fn try_extend<I: IntoIterator<Item = (K, V)>>(&self, iter: I) -> Result<()> {
        for (k, v) in iter {
            self.insert(k, v)?;
        }
        Ok(())
    }

    /// Iterates in insertion order; yields an `Err` (RuntimeError "Dict changed during
    /// iteration") and stops if a key is added or removed meanwhile, from any thread.
    ///
    /// ```
    /// let d: ffikit::Dict<i64, i64> = vec![(1, 10), (2, 20)].into();
    /// let total: i64 = d.iter().map(|kv| kv.unwrap().1).sum();
    /// assert_eq!(total, 30);
    /// ```
    pub fn iter(&self) -> DictIter<'_, K, V> {
        let mut it = sys::ffk_dict_iter { dict: std::ptr::null_mut(), pos: 0, version: 0 };
        // SAFETY: the iterator borrows the Dict, which '_ keeps alive.
        unsafe { sys::ffk_dict_iter_init(&mut it, self.raw()) };
        DictIter { it, done: false, _d: PhantomData }
    }
}

/// The iterator of `Dict::iter`.
pub struct DictIter<'a, K: Element, V: Element> {
    it: sys::ffk_dict_iter,
    done: bool,
    _d: PhantomData<&'a Dict<K, V>>,
}

impl<K: Element, V: Element> Iterator for DictIter<'_, K, V> {
    type Item = Result<(K, V)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (mut k, mut v) = (none_raw(), none_raw());
        // SAFETY: a live iterator over a live Dict.
        let rc = unsafe { sys::ffk_dict_iter_next(&mut self.it, &mut k, &mut v) };
        iter_step(&mut self.done, rc, || {
            let (k, v) = (Any(k), Any(v));
            Ok((K::from_view(&k.0)?, V::from_view(&v.0)?))
        })
    }
}

impl<'a, K: Element, V: Element> IntoIterator for &'a Dict<K, V> {
    type Item = Result<(K, V)>;
    type IntoIter = DictIter<'a, K, V>;
    fn into_iter(self) -> DictIter<'a, K, V> {
        self.iter()
    }
}

crate::object::collection_impls!(map Dict);

impl<K: Element, V: Element> TryFrom<Dict<K, V>> for Vec<(K, V)> {
    type Error = Error;
    fn try_from(d: Dict<K, V>) -> Result<Self> {
        d.to_vec()
    }
}
impl<K: Element + Eq + std::hash::Hash, V: Element> TryFrom<Dict<K, V>> for HashMap<K, V> {
    type Error = Error;
    fn try_from(d: Dict<K, V>) -> Result<Self> {
        Ok(d.to_vec()?.into_iter().collect())
    }
}
impl<K: Element + Ord, V: Element> TryFrom<Dict<K, V>> for BTreeMap<K, V> {
    type Error = Error;
    fn try_from(d: Dict<K, V>) -> Result<Self> {
        Ok(d.to_vec()?.into_iter().collect())
    }
}
