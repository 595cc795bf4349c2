//! Enums (ffikit/enum.h): registered types whose members are singletons, shared by C, Python
//! (`ffikit.dataclasses.Enum`) and Rust.
//!
//! An [`EnumType`] names an enum type (one derived from `ffi.Enum`, `ffi.IntEnum` or
//! `ffi.StrEnum`); its members live in the type's C registry, so a lookup here returns the
//! very object Python's `Color.RED` wraps. An [`EnumMember`] is a handle on one member: its
//! name (the str index), its value (the int index), equality by identity. Everything is C's:
//! this module only converts.
//!
//! ```
//! use ffikit::enums::{EnumKind, EnumType};
//! let color = EnumType::define("doc.enums.Color", EnumKind::Plain).unwrap();
//! let red = color.add("RED", None).unwrap();
//! color.add("GREEN", None).unwrap();
//! assert_eq!(color.get("RED").unwrap().unwrap(), red);
//! assert_eq!(color.get_value(1).unwrap().unwrap().name(), "GREEN");
//! assert!(color.get("PINK").unwrap().is_none());
//! assert_eq!(color.members().unwrap().len(), 2);
//! assert_eq!(red.to_string(), "doc.enums.Color.RED");
//! color.set_attr("cost", &red, 7i64).unwrap();
//! assert_eq!(color.attr("cost", &red).unwrap().unwrap().to::<i64>().unwrap(), 7);
//! ```
use crate::any::{none_raw, Any, AnyView};
use crate::error::{check, cstring, Error, Result};
use crate::object::{repr_of, ObjectRef};
use crate::sys;
use std::fmt;
use std::ptr;

/// The kind of an enum type: the base it derives from (C's `ffk_enum_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnumKind {
    /// `ffi.Enum`: the int index is the registration order, the str index the name.
    Plain,
    /// `ffi.IntEnum`: the int index is the member's value, given explicitly.
    Int,
    /// `ffi.StrEnum`: the str index is the member's value.
    Str,
}

impl EnumKind {
    fn raw(self) -> sys::ffk_enum_kind {
        match self {
            EnumKind::Plain => sys::ffk_enum_kind::FFK_ENUM_PLAIN,
            EnumKind::Int => sys::ffk_enum_kind::FFK_ENUM_INT,
            EnumKind::Str => sys::ffk_enum_kind::FFK_ENUM_STR,
        }
    }

    fn from_raw(v: i32) -> Option<EnumKind> {
        [EnumKind::Plain, EnumKind::Int, EnumKind::Str].into_iter().find(|k| k.raw().0 as i32 == v)
    }
}

/// An enum type, by its type index (types are never removed, so the handle is a plain value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EnumType(i32);

impl EnumType {
    /// The enum type with key `key`: `Ok(None)` when no type has that key, a TypeError
    /// ("`mylib.Point` is not an enum type") for a type that is not an enum.
    pub fn lookup(key: &str) -> Result<Option<EnumType>> {
        let k = cstring(key)?;
        let mut index = 0;
        // SAFETY: NUL-terminated key, out parameter.
        match unsafe { sys::ffk_type_lookup(k.as_ptr(), &mut index) } {
            1 => EnumType::from_index(index).map(Some),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// The enum type at `index`: a TypeError for a type that is not an enum, a ValueError
    /// for an unknown index.
    pub fn from_index(index: i32) -> Result<EnumType> {
        // SAFETY: cannot fail.
        if unsafe { sys::ffk_enum_kind_of(index) } >= 0 {
            return Ok(EnumType(index));
        }
        // ffk_enum_count raises the error naming the problem.
        // SAFETY: any index is accepted.
        let n = unsafe { sys::ffk_enum_count(index) };
        debug_assert!(n < 0);
        Err(Error::fetch())
    }

    /// Defines enum type `key` of `kind` with no fields of its own (the same call again
    /// returns the same type); C's errors for a key taken by another type.
    pub fn define(key: &str, kind: EnumKind) -> Result<EnumType> {
        let k = cstring(key)?;
        // SAFETY: NUL-terminated key; NULL doc.
        let index = unsafe { sys::ffk_enum_define(k.as_ptr(), kind.raw(), ptr::null()) };
        if index < 0 {
            return Err(Error::fetch());
        }
        Ok(EnumType(index))
    }

    /// The type index.
    pub fn index(&self) -> i32 {
        self.0
    }

    /// The type key (`"mylib.Color"`).
    pub fn key(&self) -> &'static str {
        // SAFETY: a registered index; keys live until exit.
        let p = unsafe { sys::ffk_type_key(self.0) };
        unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap_or("")
    }

    /// The kind (the base the type derives from).
    pub fn kind(&self) -> EnumKind {
        // SAFETY: cannot fail; the handle holds an enum type.
        EnumKind::from_raw(unsafe { sys::ffk_enum_kind_of(self.0) }).expect("an EnumType holds an enum type")
    }

    fn member(rc: i32, out: *mut sys::ffk_object) -> Result<Option<EnumMember>> {
        match rc {
            1 => Ok(Some(EnumMember(unsafe { ObjectRef::from_raw(out) }.expect("C returned a member")))),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// The member whose name (str index) is `name`, `Ok(None)` when there is none.
    pub fn get(&self, name: &str) -> Result<Option<EnumMember>> {
        let mut out = ptr::null_mut();
        // SAFETY: `name` is valid UTF-8 of the given length; out receives a new reference.
        let rc = unsafe { sys::ffk_enum_get_str(self.0, name.as_ptr().cast(), name.len(), &mut out) };
        EnumType::member(rc, out)
    }

    /// The member whose value (int index) is `value`, `Ok(None)` when there is none.
    pub fn get_value(&self, value: i64) -> Result<Option<EnumMember>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a new reference.
        let rc = unsafe { sys::ffk_enum_get_int(self.0, value, &mut out) };
        EnumType::member(rc, out)
    }

    /// The number of members.
    pub fn len(&self) -> Result<usize> {
        // SAFETY: any index is accepted.
        let n = unsafe { sys::ffk_enum_count(self.0) };
        if n < 0 {
            return Err(Error::fetch());
        }
        Ok(n as usize)
    }

    /// Whether the type has no members.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The members in registration order (a snapshot).
    pub fn members(&self) -> Result<Vec<EnumMember>> {
        // SAFETY: a new Array or NULL with the error set.
        let a = unsafe { sys::ffk_enum_members(self.0) };
        if a.is_null() {
            return Err(Error::fetch());
        }
        // SAFETY: `a` is a live Array we own; its items are borrowed while it lives.
        unsafe {
            let n = sys::ffk_array_size(a) as usize;
            let items = sys::ffk_array_items_borrow(a);
            let out = (0..n).map(|i| EnumMember(ObjectRef::from_borrowed((*items.add(i)).__bindgen_anon_1.v_obj))).collect();
            sys::ffk_object_release(a.cast());
            Ok(out)
        }
    }

    /// Makes and registers member `name`. `value` is the int index: required for an
    /// IntEnum type, `None` for the others (their int index is the registration order).
    /// C's ValueError "Duplicate enum index for type `...`" for a taken name or value.
    pub fn add(&self, name: &str, value: Option<i64>) -> Result<EnumMember> {
        let n = cstring(name)?;
        let v = value.unwrap_or(0);
        let mut out = ptr::null_mut();
        // SAFETY: NUL-terminated name; value NULL or a live i64; out receives a new reference.
        check(unsafe {
            sys::ffk_enum_add(self.0, n.as_ptr(), if value.is_some() { &v } else { ptr::null() }, &mut out)
        })?;
        Ok(EnumMember(unsafe { ObjectRef::from_raw(out) }.expect("C returned the member")))
    }

    /// The value of `member` in attribute column `attr`, `Ok(None)` when it has none.
    pub fn attr(&self, attr: &str, member: &EnumMember) -> Result<Option<Any>> {
        let a = cstring(attr)?;
        let mut out = none_raw();
        // SAFETY: live member, NUL-terminated name; out receives a new reference.
        let rc = unsafe { sys::ffk_enum_attr_get(self.0, a.as_ptr(), member.0.as_ptr(), &mut out) };
        let out = Any(out);
        match rc {
            1 => Ok(Some(out)),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Sets the value of `member` in attribute column `attr` (a TypeError for a member of
    /// another type).
    pub fn set_attr<'a>(&self, attr: &str, member: &EnumMember, value: impl Into<AnyView<'a>>) -> Result<()> {
        let a = cstring(attr)?;
        let value = value.into();
        // SAFETY: live member, NUL-terminated name, a borrowed valid value.
        check(unsafe { sys::ffk_enum_attr_set(self.0, a.as_ptr(), member.0.as_ptr(), value.as_raw()) })
    }
}

/// One enum member: a registered singleton. `Clone` shares it; `==` is identity (the same
/// member), as structural equality of enums is; `Display`/`Debug` print C's repr
/// (`mylib.Color.RED`).
#[derive(Clone)]
#[repr(transparent)]
pub struct EnumMember(ObjectRef);

impl EnumMember {
    /// The object as a member: a TypeError when it is not an object of an enum type.
    pub fn from_object(o: ObjectRef) -> Result<EnumMember> {
        // SAFETY: a live object.
        if unsafe { sys::ffk_enum_is_member(o.as_ptr()) } {
            Ok(EnumMember(o))
        } else {
            Err(Error::new("TypeError", &format!("expected an enum member but got `{}`", o.type_name())))
        }
    }

    /// The name (str index).
    pub fn name(&self) -> String {
        // SAFETY: a live member, so the string is its borrowed, non-NULL str index.
        let s = unsafe { sys::ffk_enum_member_str_borrow(self.0.as_ptr()) };
        if s.is_null() {
            drop(Error::fetch());
            return String::new();
        }
        String::from_utf8_lossy(unsafe { crate::string::string_bytes(s) }).into_owned()
    }

    /// The value (int index).
    pub fn value(&self) -> i64 {
        let mut v = 0;
        // SAFETY: a live member: cannot fail.
        let rc = unsafe { sys::ffk_enum_member_int(self.0.as_ptr(), &mut v) };
        debug_assert_eq!(rc, 0);
        v
    }

    /// The member's enum type.
    pub fn enum_type(&self) -> EnumType {
        EnumType(self.0.type_index())
    }

    /// The untyped handle.
    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    /// Gives up the typed view.
    pub fn into_object(self) -> ObjectRef {
        self.0
    }

    /// A value holding the member.
    pub fn to_any(&self) -> Any {
        Any::from_object(self.0.clone())
    }
}

impl PartialEq for EnumMember {
    fn eq(&self, other: &Self) -> bool {
        self.0.ptr_eq(&other.0)
    }
}

impl Eq for EnumMember {}

impl std::hash::Hash for EnumMember {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.0.as_ptr() as usize).hash(state)
    }
}

impl fmt::Display for EnumMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&repr_of(self.0.view().as_raw()))
    }
}

impl fmt::Debug for EnumMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
