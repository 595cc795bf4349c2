//! `Map<K, V>`: a copy-on-write mapping in insertion order (`&mut self` mutators).
use crate::any::{none_raw, Any, Element};
use crate::error::{check_ptr, Error, Result};
use crate::object::{container_handle, ObjectRef};
use crate::sys;
use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;

/// A copy-on-write mapping from `K` to `V` that keeps insertion order.
///
/// ```
/// use ffikit::Map;
/// let mut m: Map<String, i64> = Map::new().unwrap();
/// m.insert("a".into(), 1).unwrap();
/// m.insert("b".into(), 2).unwrap();
/// let snapshot = m.clone();
/// m.insert("a".into(), 10).unwrap();       // keeps its position; `snapshot` unchanged
/// assert_eq!(m.get(&"a".to_string()), Some(10));
/// assert_eq!(snapshot.get(&"a".to_string()), Some(1));
/// assert_eq!(m.keys(), vec!["a".to_string(), "b".to_string()]);
/// assert_eq!(m.to_string(), "{\"a\": 10, \"b\": 2}");
/// ```
#[repr(transparent)]
pub struct Map<K: Element = Any, V: Element = Any>(pub(crate) ObjectRef, PhantomData<fn() -> (K, V)>);

/// Checks every (key, value) pair against K and V.
pub(crate) fn check_pairs<'a, K: Element, V: Element>(
    what: &str,
    pairs: impl Iterator<Item = (&'a sys::ffk_any, &'a sys::ffk_any)>,
) -> Result<()> {
    for (i, (k, v)) in pairs.enumerate() {
        for (x, ok, schema, part) in [(k, K::accepts(k), K::schema(), "key"), (v, V::accepts(v), V::schema(), "value")] {
            if !ok {
                let got = crate::object::type_error(&schema, x);
                return Err(Error::new("TypeError", &format!("{} entry #{} {}: {}", what, i, part, got.message())));
            }
        }
    }
    Ok(())
}

container_handle!(Map<K, V>, FFK_TYPE_MAP);

/// Borrowed (key, value) pairs in insertion order, no reference counting.
pub struct RawIter<'a> {
    map: *const sys::ffk_map,
    pos: i64,
    _m: PhantomData<&'a ()>,
}

impl<'a> Iterator for RawIter<'a> {
    type Item = (&'a sys::ffk_any, &'a sys::ffk_any);
    fn next(&mut self) -> Option<Self::Item> {
        let (mut k, mut v) = (std::ptr::null(), std::ptr::null());
        // SAFETY: pointers borrowed from a Map that 'a keeps alive and unmutated.
        if unsafe { sys::ffk_map_next(self.map, &mut self.pos, &mut k, &mut v) } {
            Some(unsafe { (&*k, &*v) })
        } else {
            None
        }
    }
}

impl<K: Element, V: Element> Map<K, V> {
    fn check_elements(&self) -> Result<()> {
        check_pairs::<K, V>("Map", self.raw_iter())
    }

    fn raw(&self) -> *mut sys::ffk_map {
        self.0.as_ptr().cast()
    }

    fn cow(&mut self, f: impl FnOnce(*mut *mut sys::ffk_map) -> i32) -> Result<i32> {
        let mut raw = self.raw();
        let rc = f(&mut raw);
        // SAFETY: the mutator took care of the old reference and left ours in `raw`.
        unsafe { self.0.set_raw(raw.cast()) };
        if rc < 0 {
            Err(Error::fetch())
        } else {
            Ok(rc)
        }
    }

    /// A new empty Map.
    pub fn new() -> Result<Self> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_map_new() }).map(Map::wrap)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        // SAFETY: a valid handle.
        unsafe { sys::ffk_map_size(self.raw()) as usize }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key`, if present.
    ///
    /// ```
    /// let m: ffikit::Map<i64, f64> = vec![(1, 0.5)].into();
    /// assert_eq!((m.get(&1), m.get(&2)), (Some(0.5), None));
    /// ```
    pub fn get(&self, key: &K) -> Option<V> {
        let k = key.clone().into_any().ok()?;
        let mut out = none_raw();
        // SAFETY: borrowed key; out receives a new reference. The lookup convention is
        // 1 found, 0 missing, -1 error; the error (a NULL handle or key) cannot happen here.
        match unsafe { sys::ffk_map_get(self.raw(), k.as_raw(), &mut out) } {
            1 => Some(V::from_accepted(&Any(out).0)),
            rc => {
                debug_assert_eq!(rc, 0, "ffk_map_get failed on a valid Map and key");
                None
            }
        }
    }

    /// True when `key` is present.
    ///
    /// ```
    /// let m: ffikit::Map<i64, i64> = vec![(1, 1)].into();
    /// assert!(m.contains_key(&1));
    /// ```
    pub fn contains_key(&self, key: &K) -> bool {
        match key.clone().into_any() {
            // SAFETY: borrowed key.
            Ok(k) => unsafe { sys::ffk_map_contains(self.raw(), k.as_raw()) },
            Err(_) => false,
        }
    }

    /// Sets `key` to `value` (an existing key keeps its position).
    ///
    /// ```
    /// let mut m: ffikit::Map<String, i64> = ffikit::Map::new().unwrap();
    /// m.insert("k".into(), 1).unwrap();
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn insert(&mut self, key: K, value: V) -> Result<()> {
        let (k, v) = (key.into_any()?, value.into_any()?);
        // SAFETY: borrowed key and value.
        self.cow(|m| unsafe { sys::ffk_map_set(m, k.as_raw(), v.as_raw()) }).map(|_| ())
    }

    /// Removes `key`; true when it was present.
    ///
    /// ```
    /// let mut m: ffikit::Map<i64, i64> = vec![(1, 1)].into();
    /// let before = m.clone();
    /// assert!(m.remove(&1).unwrap());
    /// assert_eq!((m.len(), before.len()), (0, 1));
    /// ```
    pub fn remove(&mut self, key: &K) -> Result<bool> {
        let k = key.clone().into_any()?;
        // SAFETY: borrowed key.
        self.cow(|m| unsafe { sys::ffk_map_erase(m, k.as_raw()) }).map(|rc| rc == 1)
    }

    pub(crate) fn raw_iter(&self) -> RawIter<'_> {
        RawIter { map: self.raw(), pos: 0, _m: PhantomData }
    }

    /// The (key, value) pairs in insertion order.
    ///
    /// ```
    /// let m: ffikit::Map<i64, i64> = vec![(2, 20), (1, 10)].into();
    /// assert_eq!(m.iter().collect::<Vec<_>>(), vec![(2, 20), (1, 10)]); // insertion order
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (K, V)> + '_ {
        self.raw_iter().map(|(k, v)| {
            (K::from_accepted(k), V::from_accepted(v))
        })
    }

    /// The keys in insertion order.
    pub fn keys(&self) -> Vec<K> {
        self.raw_iter().map(|(k, _)| K::from_accepted(k)).collect()
    }

    /// The values in insertion order.
    ///
    /// ```
    /// let m: ffikit::Map<i64, i64> = vec![(2, 20), (1, 10)].into();
    /// assert_eq!(m.values(), vec![20, 10]);
    /// ```
    pub fn values(&self) -> Vec<V> {
        self.raw_iter().map(|(_, v)| V::from_accepted(v)).collect()
    }

    /// Inserts every pair, stopping at the first error.
    pub fn try_extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) -> Result<()> {
        for (k, v) in iter {
            self.insert(k, v)?;
        }
        Ok(())
    }

    /// The entries as a shared `Dict<K, V>`.
    ///
    /// ```
    /// let m: ffikit::Map<i64, i64> = vec![(1, 1)].into();
    /// let d = m.to_dict().unwrap();
    /// d.insert(2, 2).unwrap();
    /// assert_eq!((m.len(), d.len()), (1, 2));
    /// ```
    pub fn to_dict(&self) -> Result<crate::Dict<K, V>> {
        // SAFETY: a new reference or NULL.
        check_ptr(unsafe { sys::ffk_dict_from_map(self.raw()) }).map(crate::Dict::wrap)
    }
}

crate::object::collection_impls!(map Map);

impl<K: Element, V: Element> From<Map<K, V>> for Vec<(K, V)> {
    fn from(m: Map<K, V>) -> Self {
        m.iter().collect()
    }
}
impl<K: Element + Eq + std::hash::Hash, V: Element> From<Map<K, V>> for HashMap<K, V> {
    fn from(m: Map<K, V>) -> Self {
        m.iter().collect()
    }
}
impl<K: Element + Ord, V: Element> From<Map<K, V>> for BTreeMap<K, V> {
    fn from(m: Map<K, V>) -> Self {
        m.iter().collect()
    }
}
