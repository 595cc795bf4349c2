//! Reflection (ffikit/reflect.h): the fields, methods and constructors of reflected object
//! types, whichever language defined them.
//!
//! * [`TypeInfo`] is a registered type (by index): its key, parent, doc, fields and methods,
//!   construction by its constructor ([`TypeInfo::create`]).
//! * [`FieldInfo`] and [`MethodInfo`] are C's resolved descriptions, immutable and valid
//!   until exit; a `FieldInfo` fetched once reads and writes a field with no name lookup.
//! * [`Reflect`], implemented for every object handle, reads and writes fields by name with
//!   typed results (`obj.field::<i64>("a")?`) and calls methods by name.
//!
//! C decides everything: conversions to the field's type, the read-only check, the texts
//! of the errors (an AttributeError "`testing.TestIntPair` object has no field `c`", a
//! TypeError "Mismatched type on field `a` ..."). The Rust side converts the results with
//! `Element`'s rules, as every other read does.
//!
//! Invariant: the `&'static` pointers held here come from C's registry, which never frees a
//! type description (reflect.h: "valid until exit").
use crate::any::{none_raw, Any, AnyView, Element};
use crate::error::{check, cstring, Error, Result};
use crate::function::Function;
use crate::object::{ObjectRef, ObjectType};
use crate::sys;
use std::ffi::{c_char, c_void, CStr};
use std::fmt;

/// `&'static str` from a registry string (NULL gives `None`).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that lives until exit.
unsafe fn static_str(p: *const c_char) -> Option<&'static str> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_str().unwrap_or("?"))
    }
}

/// Calls `f` with `name` as a NUL-terminated string: copied into a stack buffer when short
/// (field and method names are), else into a `CString`. A name with a NUL byte is the
/// ValueError of `cstring`.
fn with_cname<R>(name: &str, f: impl FnOnce(*const c_char) -> Result<R>) -> Result<R> {
    let bytes = name.as_bytes();
    let mut buf = [0u8; 64];
    if bytes.len() < buf.len() && !bytes.contains(&0) {
        buf[..bytes.len()].copy_from_slice(bytes);
        return f(buf.as_ptr().cast());
    }
    let c = cstring(name)?;
    f(c.as_ptr())
}

/// A C string constant from the headers (`b"__s_equal__\0"`) as a `&str`, at compile time.
const fn attr_name(bytes: &'static [u8]) -> &'static str {
    let Some((_nul, text)) = bytes.split_last() else { panic!("an empty C string constant") };
    match std::str::from_utf8(text) {
        Ok(s) => s,
        Err(_) => panic!("a C string constant that is not UTF-8"),
    }
}

/// The flags of a field (`FFK_FIELD_*`): a read-only field unless `WRITABLE`.
///
/// ```
/// use ffikit::FieldFlags;
/// let f = FieldFlags::WRITABLE | FieldFlags::KW_ONLY;
/// assert!(f.contains(FieldFlags::WRITABLE) && !f.contains(FieldFlags::REPR_OFF));
/// assert_eq!(format!("{:?}", f), "WRITABLE | KW_ONLY");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldFlags(pub u32);

// The casts: bindgen types the anonymous enum's constants with an unstable alias
// (`_bindgen_ty_N`, today `u32`), so they are spelled out rather than relied on.
#[allow(clippy::unnecessary_cast)]
impl FieldFlags {
    /// Writable after construction.
    pub const WRITABLE: FieldFlags = FieldFlags(sys::FFK_FIELD_WRITABLE as u32);
    /// Has a default value (used when a constructor is not given the field).
    pub const HAS_DEFAULT: FieldFlags = FieldFlags(sys::FFK_FIELD_HAS_DEFAULT as u32);
    /// Not a constructor parameter.
    pub const INIT_OFF: FieldFlags = FieldFlags(sys::FFK_FIELD_INIT_OFF as u32);
    /// A constructor parameter by name only.
    pub const KW_ONLY: FieldFlags = FieldFlags(sys::FFK_FIELD_KW_ONLY as u32);
    /// Left out of repr.
    pub const REPR_OFF: FieldFlags = FieldFlags(sys::FFK_FIELD_REPR_OFF as u32);
    /// Ignored by structural equality and hash.
    pub const COMPARE_OFF: FieldFlags = FieldFlags(sys::FFK_FIELD_COMPARE_OFF as u32);
    /// With `HAS_DEFAULT`: the default is a Function called for each new object.
    pub const DEFAULT_FACTORY: FieldFlags = FieldFlags(sys::FFK_FIELD_DEFAULT_FACTORY as u32);
    /// Structural equality and hash: a definition region (tvm_ffi's `"def"`): the
    /// variables ([`StructuralKind::Var`]) met inside it, their own fields included, are
    /// bound to their counterparts.
    pub const S_DEF: FieldFlags = FieldFlags(sys::FFK_FIELD_S_DEF as u32);
    /// A simple definition region (`"def-simple"`): as `S_DEF`, but a variable's own
    /// fields are walked as uses.
    pub const S_DEF_SIMPLE: FieldFlags = FieldFlags(sys::FFK_FIELD_S_DEF_SIMPLE as u32);

    const NAMES: [(FieldFlags, &'static str); 9] = [
        (Self::WRITABLE, "WRITABLE"),
        (Self::HAS_DEFAULT, "HAS_DEFAULT"),
        (Self::INIT_OFF, "INIT_OFF"),
        (Self::KW_ONLY, "KW_ONLY"),
        (Self::REPR_OFF, "REPR_OFF"),
        (Self::COMPARE_OFF, "COMPARE_OFF"),
        (Self::DEFAULT_FACTORY, "DEFAULT_FACTORY"),
        (Self::S_DEF, "S_DEF"),
        (Self::S_DEF_SIMPLE, "S_DEF_SIMPLE"),
    ];

    /// No flag.
    pub const fn empty() -> FieldFlags {
        FieldFlags(0)
    }
    /// The bits.
    pub const fn bits(self) -> u32 {
        self.0
    }
    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: FieldFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// How structural equality and hash treat the objects of a type (C's `ffk_s_kind`, tvm_ffi's
/// kinds and numbers; ffikit/structural.h, "Kinds and variables").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum StructuralKind {
    /// By type and compared fields (the default).
    Tree = sys::ffk_s_kind::FFK_S_KIND_TREE.0 as i64,
    /// A variable: equal to another only where bound to it (a [`FieldFlags::S_DEF`] field, or
    /// `map_free_vars`), or to itself.
    Var = sys::ffk_s_kind::FFK_S_KIND_VAR.0 as i64,
    /// By fields, and the sharing must match.
    Dag = sys::ffk_s_kind::FFK_S_KIND_DAG.0 as i64,
    /// As `Tree`, and an object equals itself without a look inside.
    ConstTree = sys::ffk_s_kind::FFK_S_KIND_CONST_TREE.0 as i64,
    /// By identity only.
    Singleton = sys::ffk_s_kind::FFK_S_KIND_SINGLETON.0 as i64,
}

impl std::ops::BitOr for FieldFlags {
    type Output = FieldFlags;
    fn bitor(self, rhs: FieldFlags) -> FieldFlags {
        FieldFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for FieldFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<String> = Self::NAMES.iter().filter(|(x, _)| self.contains(*x)).map(|(_, n)| n.to_string()).collect();
        let known = Self::NAMES.iter().fold(0, |acc, (x, _)| acc | x.0);
        if self.0 & !known != 0 {
            names.push(format!("{:#x}", self.0 & !known));
        }
        if names.is_empty() {
            f.write_str("(none)")
        } else {
            f.write_str(&names.join(" | "))
        }
    }
}

/// The C type stored at a field's offset (reflect.h's storage table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldStorage {
    /// `int64_t` (`int`).
    Int,
    /// `double` (`float`).
    Float,
    /// `bool` (`bool`).
    Bool,
    /// An owning `ffk_object *` (`str`, `bytes`, containers, other object types).
    Object,
    /// An owning `ffk_any` (`Any`, `Device`, `dtype`, `Optional<int>`...).
    Any,
}

impl FieldStorage {
    /// From C's `ffk_field_storage` value.
    pub fn from_raw(v: i32) -> Option<FieldStorage> {
        use sys::ffk_field_storage as s;
        let is = |x: s| v == x.0 as i32;
        Some(if is(s::FFK_FIELD_STORAGE_INT) {
            FieldStorage::Int
        } else if is(s::FFK_FIELD_STORAGE_FLOAT) {
            FieldStorage::Float
        } else if is(s::FFK_FIELD_STORAGE_BOOL) {
            FieldStorage::Bool
        } else if is(s::FFK_FIELD_STORAGE_OBJECT) {
            FieldStorage::Object
        } else if is(s::FFK_FIELD_STORAGE_ANY) {
            FieldStorage::Any
        } else {
            return None;
        })
    }

    /// The storage C chooses for a field of type `type_text` (`"int"`, `"Array<str>"`), or
    /// C's ValueError when the text does not parse.
    ///
    /// ```
    /// use ffikit::FieldStorage;
    /// assert_eq!(FieldStorage::for_type("Array<float>").unwrap(), FieldStorage::Object);
    /// assert_eq!(FieldStorage::for_type("Optional<int>").unwrap(), FieldStorage::Any);
    /// assert_eq!(FieldStorage::for_type("Array<").unwrap_err().kind(), "ValueError");
    /// ```
    pub fn for_type(type_text: &str) -> Result<FieldStorage> {
        let t = cstring(type_text)?;
        // SAFETY: a NUL-terminated string for the call.
        let v = unsafe { sys::ffk_field_storage_for(t.as_ptr()) };
        if v < 0 {
            return Err(Error::fetch());
        }
        Ok(FieldStorage::from_raw(v).expect("ffk_field_storage_for returns an ffk_field_storage"))
    }
}

/// A field of a reflected type, resolved once (C's `ffk_field_info`): the fast path for
/// reads and writes, with no name lookup. `Copy`; valid until exit.
///
/// ```
/// use ffikit::{FieldFlags, FieldStorage};
/// # ffikit::reflected_type! {
/// #     #[type_key = "doc.field.Counter", layout = CounterLayout]
/// #     pub struct Counter {
/// #         /// How many.
/// #         #[writable(set_n)] n: i64 = 0,
/// #     }
/// # }
/// let n = Counter::type_info().unwrap().field("n").unwrap(); // once
/// assert_eq!((n.name(), n.type_text(), n.doc()), ("n", "int", Some("How many.")));
/// assert_eq!((n.storage(), n.flags()), (FieldStorage::Int, FieldFlags::WRITABLE | FieldFlags::HAS_DEFAULT));
/// let c = Counter::new(1).unwrap();
/// for _ in 0..3 {
///     let v: i64 = n.get(&c).unwrap();
///     n.set(&c, v + 1).unwrap();
/// }
/// assert_eq!(c.n(), 4);
/// assert_eq!(n.set(&c, "four".to_string()).unwrap_err().kind(), "TypeError");
/// ```
#[derive(Clone, Copy)]
pub struct FieldInfo(&'static sys::ffk_field_info);

// SAFETY: the description is immutable and lives until exit; C documents every use as
// callable from any thread.
unsafe impl Send for FieldInfo {}
unsafe impl Sync for FieldInfo {}

impl FieldInfo {
    /// Wraps C's pointer.
    ///
    /// # Safety
    /// `p` must come from the registry (ffk_type_field_at, ffk_type_find_field).
    pub unsafe fn from_raw(p: *const sys::ffk_field_info) -> FieldInfo {
        FieldInfo(&*p)
    }
    /// The C description.
    pub fn as_raw(&self) -> *const sys::ffk_field_info {
        self.0
    }
    /// The name.
    pub fn name(&self) -> &'static str {
        // SAFETY: registry strings live until exit.
        unsafe { static_str(self.0.name) }.unwrap_or("")
    }
    /// The doc text, if any.
    pub fn doc(&self) -> Option<&'static str> {
        // SAFETY: as for name.
        unsafe { static_str(self.0.doc) }
    }
    /// The type in the signature language, canonically spelled (`"Array<str>"`).
    pub fn type_text(&self) -> &'static str {
        // SAFETY: as for name.
        unsafe { static_str(self.0.type_text) }.unwrap_or("")
    }
    /// The flags.
    pub fn flags(&self) -> FieldFlags {
        FieldFlags(self.0.flags)
    }
    /// Whether it may be written after construction.
    pub fn is_writable(&self) -> bool {
        self.flags().contains(FieldFlags::WRITABLE)
    }
    /// What is stored at its offset.
    pub fn storage(&self) -> FieldStorage {
        FieldStorage::from_raw(self.0.storage).expect("C stores a known storage kind")
    }
    /// The byte offset inside the instance.
    pub fn offset(&self) -> usize {
        self.0.offset
    }
    /// Its index in the owner type's full field list (parents' fields first).
    pub fn position(&self) -> i32 {
        self.0.position
    }
    /// The type that declared it.
    pub fn owner(&self) -> TypeInfo {
        TypeInfo(self.0.owner_index)
    }
    /// The default value (a Function for a default factory), `None` without one.
    pub fn default_value(&self) -> Option<Any> {
        if !self.flags().contains(FieldFlags::HAS_DEFAULT) {
            return None;
        }
        // SAFETY: the registry owns the value until exit; the view is copied into an owned one.
        Some(unsafe { AnyView::from_raw(self.0.default_value) }.to_any())
    }

    /// Reads the field of `obj` as any value (a new reference: a container is not copied).
    /// A TypeError when `obj` is not an instance of the owner type.
    pub fn get_any<O: ObjectType>(&self, obj: &O) -> Result<Any> {
        let mut out = none_raw();
        // SAFETY: a live object, a registry field, and an out value C fills with an owned value.
        check(unsafe { sys::ffk_field_get(self.0, obj.as_object().as_ptr(), &mut out) })?;
        Ok(Any(out))
    }

    /// Reads the field of `obj` as `T` (C's conversion rules and texts).
    pub fn get<T: Element, O: ObjectType>(&self, obj: &O) -> Result<T> {
        self.get_any(obj)?.to::<T>()
    }

    /// Writes `value` (converted to the field's type by C). An AttributeError for a
    /// read-only field, a TypeError for a value of the wrong type; the field is unchanged
    /// on error.
    pub fn set<V: Element, O: ObjectType>(&self, obj: &O, value: V) -> Result<()> {
        let v = value.into_any()?;
        self.set_view(obj, v.view())
    }

    /// `set` with a borrowed value.
    pub fn set_view<O: ObjectType>(&self, obj: &O, value: AnyView<'_>) -> Result<()> {
        // SAFETY: a live object, a registry field and a borrowed valid value.
        check(unsafe { sys::ffk_field_set(self.0, obj.as_object().as_ptr(), value.as_raw()) })
    }
}

impl fmt::Debug for FieldInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldInfo")
            .field("name", &self.name())
            .field("type", &self.type_text())
            .field("flags", &self.flags())
            .field("doc", &self.doc())
            .finish()
    }
}

/// A method of a reflected type (C's `ffk_method_info`). `Copy`; valid until exit.
#[derive(Clone, Copy)]
pub struct MethodInfo(&'static sys::ffk_method_info);

// SAFETY: as for FieldInfo.
unsafe impl Send for MethodInfo {}
unsafe impl Sync for MethodInfo {}

impl MethodInfo {
    /// The name.
    pub fn name(&self) -> &'static str {
        // SAFETY: registry strings live until exit.
        unsafe { static_str(self.0.name) }.unwrap_or("")
    }
    /// The doc text (the method's or its Function's), if any.
    pub fn doc(&self) -> Option<&'static str> {
        // SAFETY: as for name.
        unsafe { static_str(self.0.doc) }
    }
    /// Whether it is static (called without the object).
    pub fn is_static(&self) -> bool {
        self.0.is_static
    }
    /// The type that declared it.
    pub fn owner(&self) -> TypeInfo {
        TypeInfo(self.0.owner_index)
    }
    /// The Function (a new handle). An instance method takes the object as argument 0.
    pub fn function(&self) -> Function {
        // SAFETY: the registry holds a reference until exit; we take our own.
        Function(unsafe { ObjectRef::from_borrowed(self.0.function.cast()) })
    }
}

impl fmt::Debug for MethodInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodInfo")
            .field("name", &self.name())
            .field("static", &self.is_static())
            .field("signature", &self.function().signature())
            .field("doc", &self.doc())
            .finish()
    }
}

/// A registered object type, by index: its key, parent chain, and (for a reflected type)
/// fields, methods and constructor.
///
/// ```
/// use ffikit::TypeInfo;
/// let array = TypeInfo::lookup("ffikit.Array").unwrap().unwrap();
/// assert_eq!((array.key(), array.name()), ("ffikit.Array", "Array"));
/// assert!(!array.is_reflected());
/// assert_eq!(array.parent().unwrap().key(), "ffikit.Object");
/// assert!(TypeInfo::lookup("no.such.Type").unwrap().is_none());
/// assert!(TypeInfo::all().contains(&array));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeInfo(i32);

impl TypeInfo {
    /// The type with index `index`, or a ValueError naming it when there is none.
    pub fn of(index: i32) -> Result<TypeInfo> {
        // SAFETY: a plain query; C sets the ValueError for an unknown index.
        check(unsafe { sys::ffk_type_check_index(index) })?;
        Ok(TypeInfo(index))
    }

    /// The type registered under `key` ("testing.TestIntPair", "ffikit.Array"), `None`
    /// when unknown.
    pub fn lookup(key: &str) -> Result<Option<TypeInfo>> {
        let k = cstring(key)?;
        let mut index = 0;
        // SAFETY: NUL-terminated key, out parameter.
        match unsafe { sys::ffk_type_lookup(k.as_ptr(), &mut index) } {
            1 => Ok(Some(TypeInfo(index))),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Every registered type, static and registered, in index order.
    pub fn all() -> Vec<TypeInfo> {
        unsafe extern "C" fn push(index: i32, _key: *const c_char, ctx: *mut c_void) -> i32 {
            (*(ctx as *mut Vec<TypeInfo>)).push(TypeInfo(index));
            0
        }
        let mut v = Vec::new();
        // SAFETY: ctx is our Vec, used only during the call; push never fails.
        unsafe { sys::ffk_type_for_each(Some(push), &mut v as *mut Vec<TypeInfo> as *mut c_void) };
        v
    }

    /// The type index.
    pub fn index(&self) -> i32 {
        self.0
    }
    /// The full key ("testing.TestIntPair", "ffi.Array").
    pub fn key(&self) -> &'static str {
        // SAFETY: keys live until exit.
        unsafe { static_str(sys::ffk_type_key(self.0)) }.unwrap_or("")
    }
    /// The short name messages print ("Array", "testing.TestIntPair").
    pub fn name(&self) -> &'static str {
        // SAFETY: names live until exit.
        unsafe { static_str(sys::ffk_type_name(self.0)) }.unwrap_or("")
    }
    /// The parent type, `None` at the root.
    pub fn parent(&self) -> Option<TypeInfo> {
        // SAFETY: a plain query.
        let p = unsafe { sys::ffk_type_parent(self.0) };
        (p >= 0 && p != self.0).then_some(TypeInfo(p))
    }
    /// Whether this type is `base` or derives from it.
    pub fn is_subtype_of(&self, base: TypeInfo) -> bool {
        // SAFETY: a plain query.
        unsafe { sys::ffk_type_is_instance(self.0, base.0) }
    }
    /// Whether it was described by `ffk_type_define` (has fields, methods, a constructor).
    pub fn is_reflected(&self) -> bool {
        // SAFETY: a plain query.
        unsafe { sys::ffk_type_is_reflected(self.0) }
    }
    /// The instance size of a reflected type (0 otherwise).
    pub fn instance_size(&self) -> usize {
        // SAFETY: a plain query.
        unsafe { sys::ffk_type_instance_size(self.0) }
    }
    /// The doc text of a reflected type.
    pub fn doc(&self) -> Option<&'static str> {
        // SAFETY: registry strings live until exit.
        unsafe { static_str(sys::ffk_type_doc(self.0)) }
    }
    /// The constructor the type supplies, `None` when it is constructed from its fields.
    pub fn constructor(&self) -> Option<Function> {
        // SAFETY: borrowed from the registry, retained for the handle.
        let f = unsafe { sys::ffk_type_constructor(self.0) };
        (!f.is_null()).then(|| Function(unsafe { ObjectRef::from_borrowed(f.cast()) }))
    }

    /// Every field, inherited ones first in their parent's order.
    pub fn fields(&self) -> Result<Vec<FieldInfo>> {
        // SAFETY: plain queries; the pointers are the registry's.
        let n = unsafe { sys::ffk_type_num_fields(self.0) };
        if n < 0 {
            return Err(Error::fetch());
        }
        (0..n)
            .map(|i| {
                let p = unsafe { sys::ffk_type_field_at(self.0, i) };
                if p.is_null() {
                    Err(Error::fetch())
                } else {
                    Ok(unsafe { FieldInfo::from_raw(p) })
                }
            })
            .collect()
    }

    /// The field named `name` (inherited ones included), `None` when there is none.
    pub fn find_field(&self, name: &str) -> Result<Option<FieldInfo>> {
        let n = cstring(name)?;
        let mut out = std::ptr::null();
        // SAFETY: NUL-terminated name and an out pointer.
        match unsafe { sys::ffk_type_find_field(self.0, n.as_ptr(), &mut out) } {
            1 => Ok(Some(unsafe { FieldInfo::from_raw(out) })),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// The field named `name`, or C's AttributeError "`T` object has no field `name`"
    /// (`ffk_type_get_field` decides and words it).
    pub fn field(&self, name: &str) -> Result<FieldInfo> {
        let n = cstring(name)?;
        let mut out = std::ptr::null();
        // SAFETY: NUL-terminated name and an out pointer; C sets the error on failure.
        check(unsafe { sys::ffk_type_get_field(self.0, n.as_ptr(), &mut out) })?;
        // SAFETY: C returned 0, so `out` points at the type's field, valid while it is registered.
        Ok(unsafe { FieldInfo::from_raw(out) })
    }

    /// Every method, inherited ones first (an override in its parent's place).
    pub fn methods(&self) -> Result<Vec<MethodInfo>> {
        // SAFETY: as for fields.
        let n = unsafe { sys::ffk_type_num_methods(self.0) };
        if n < 0 {
            return Err(Error::fetch());
        }
        (0..n)
            .map(|i| {
                let p = unsafe { sys::ffk_type_method_at(self.0, i) };
                if p.is_null() {
                    Err(Error::fetch())
                } else {
                    Ok(MethodInfo(unsafe { &*p }))
                }
            })
            .collect()
    }

    /// The method named `name` (most derived first), `None` when there is none.
    pub fn find_method(&self, name: &str) -> Result<Option<MethodInfo>> {
        let n = cstring(name)?;
        let mut out = std::ptr::null();
        // SAFETY: NUL-terminated name and an out pointer.
        match unsafe { sys::ffk_type_find_method(self.0, n.as_ptr(), &mut out) } {
            1 => Ok(Some(MethodInfo(unsafe { &*out }))),
            0 => Ok(None),
            _ => Err(Error::fetch()),
        }
    }

    /// Adds (or replaces) an own method of a reflected type; subtypes see it unless they
    /// define the name themselves. A ValueError when the type is not reflected.
    pub fn add_method(&self, name: &str, function: &Function, is_static: bool, doc: Option<&str>) -> Result<()> {
        let n = cstring(name)?;
        let d = doc.map(cstring).transpose()?;
        let def = sys::ffk_method_def {
            name: n.as_ptr(),
            function: function.0.as_ptr().cast(),
            is_static,
            doc: d.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
        };
        // SAFETY: every pointer lives for the call; C copies the strings and retains the Function.
        check(unsafe { sys::ffk_type_add_method(self.0, &def) })
    }

    /// Makes an object by the type's constructor from positional and named values, with
    /// C's conversions and messages ("mylib.Point.__init__() missing required argument: `y`").
    ///
    /// ```
    /// use ffikit::{Any, AnyView, Reflect, TypeInfo};
    /// # ffikit::reflected_type! {
    /// #     #[type_key = "doc.create.Pair", layout = PairLayout]
    /// #     pub struct Pair { a: i64, b: String = "b".to_string() }
    /// # }
    /// # Pair::type_index().unwrap();
    /// let t = TypeInfo::lookup("doc.create.Pair").unwrap().unwrap();
    /// let p = t.create(&[AnyView::from(1i64)], &[("b", Any::from("bee").view())]).unwrap();
    /// assert_eq!((p.field::<i64>("a").unwrap(), p.field::<String>("b").unwrap()), (1, "bee".to_string()));
    /// let e = t.create(&[], &[]).unwrap_err();
    /// assert_eq!(e.to_string(), "TypeError: doc.create.Pair.__init__() missing required argument: `a`");
    /// ```
    pub fn create(&self, args: &[AnyView<'_>], kwargs: &[(&str, AnyView<'_>)]) -> Result<ObjectRef> {
        let names = kwargs.iter().map(|(name, _)| cstring(name)).collect::<Result<Vec<_>>>()?;
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut all: Vec<AnyView<'_>> = Vec::with_capacity(args.len() + kwargs.len());
        all.extend_from_slice(args);
        all.extend(kwargs.iter().map(|(_, v)| *v));
        let mut out = std::ptr::null_mut();
        // SAFETY: AnyView is repr(transparent) over ffk_any; the names live for the call;
        // out receives a new reference.
        let rc = unsafe {
            sys::ffk_object_create(self.0, all.as_ptr().cast(), args.len() as i32, name_ptrs.as_ptr(), kwargs.len() as i32, &mut out)
        };
        check(rc)?;
        Ok(unsafe { ObjectRef::from_raw(out) }.expect("ffk_object_create succeeded with an object"))
    }

    /// The attribute name of a structural-equality hook: a Function `(a, b, equal) -> bool`
    /// for two objects of the type, where `equal(x, y, attr)` compares two sub-values within
    /// the same walk (`attr`, a str or None, names the step for mismatch paths).
    pub const ATTR_S_EQUAL: &'static str = attr_name(sys::FFK_ATTR_S_EQUAL);
    /// The attribute name of a structural-hash hook: a Function `(v, hash) -> int`, where
    /// `hash(x)` is the structural hash of a sub-value within the same walk.
    pub const ATTR_S_HASH: &'static str = attr_name(sys::FFK_ATTR_S_HASH);
    /// The attribute name of a type's structural kind, an int: see
    /// [`TypeInfo::set_structural_kind`].
    pub const ATTR_S_KIND: &'static str = attr_name(sys::FFK_ATTR_S_KIND);
    /// The attribute name of a structural-visit hook: a Function `(visitor, v) -> None or
    /// VisitInterrupt` that replaces the descent of walks and visits into the type's objects
    /// (it visits the children it chooses with the global `ffi.StructuralVisitorVisit`);
    /// inherited by subtypes.
    pub const ATTR_S_VISIT: &'static str = attr_name(sys::FFK_ATTR_S_VISIT);
    /// The attribute name of a structural-rewrite hook: a Function `(mutator, v) -> result`
    /// that replaces the rebuild of the type's objects in maps and mutates (children through
    /// `ffi.StructuralMutatorMutate`); the type's own, not inherited.
    pub const ATTR_S_MUTATE: &'static str = attr_name(sys::FFK_ATTR_S_MUTATE);
    /// The attribute name of a JSON graph writer hook: a Function `(v) -> JSON-able data`.
    pub const ATTR_DATA_TO_JSON: &'static str = attr_name(sys::FFK_ATTR_DATA_TO_JSON);
    /// The attribute name of a JSON graph reader hook: a Function `(data) -> object`.
    pub const ATTR_DATA_FROM_JSON: &'static str = attr_name(sys::FFK_ATTR_DATA_FROM_JSON);

    /// Sets the type attribute `name` to `value` (C keeps its own reference until exit),
    /// replacing an earlier value; subtypes see it unless they set their own, and None set
    /// on a subtype hides its parent's. The names ffikit consults are the `ATTR_*`
    /// constants (a name starting "__" is reserved for ffikit); other names are free.
    /// Errors: a ValueError for an empty name (or one with a NUL byte), a MemoryError.
    ///
    /// ```
    /// use ffikit::{Any, AnyView, Function, TypeInfo};
    /// # ffikit::reflected_type! {
    /// #     #[type_key = "doc.attr.Tagged", layout = TaggedLayout]
    /// #     pub struct Tagged { x: i64 = 0 }
    /// # }
    /// let t = Tagged::type_info().unwrap();
    /// t.set_attr("mylib.color", &Any::from("green")).unwrap();
    /// assert_eq!(t.get_attr("mylib.color").unwrap().unwrap().as_str().unwrap(), "green");
    /// assert!(t.get_attr("mylib.size").unwrap().is_none());
    /// // A hook: every Tagged equals every other, whatever x holds.
    /// let eq = Function::from_packed("doc.eq", |_: &[AnyView]| Ok(Any::from(true))).unwrap();
    /// t.set_attr(TypeInfo::ATTR_S_EQUAL, &eq).unwrap();
    /// let (a, b) = (Tagged::new(1).unwrap(), Tagged::new(2).unwrap());
    /// assert!(ffikit::structural_eq(&a, &b).unwrap());
    /// ```
    pub fn set_attr<'a>(&self, name: &str, value: impl Into<AnyView<'a>>) -> Result<()> {
        let value = value.into();
        with_cname(name, |n| {
            // SAFETY: a NUL-terminated name and a borrowed valid value; C copies what it keeps.
            check(unsafe { sys::ffk_type_set_attr(self.0, n, value.as_raw()) })
        })
    }

    /// How structural equality and hash treat objects of this type (the
    /// [`ATTR_S_KIND`](Self::ATTR_S_KIND) attribute; [`StructuralKind::Tree`] without one).
    ///
    /// ```
    /// use ffikit::{structural_eq, structural_eq_with, Any, StructuralKind, StructuralOptions};
    /// ffikit::reflected_type! {
    ///     #[type_key = "doc.kind.Var", layout = VarLayout]
    ///     pub struct Var { #[flags(COMPARE_OFF)] name: String }
    /// }
    /// ffikit::reflected_type! {
    ///     #[type_key = "doc.kind.Lam", layout = LamLayout]
    ///     pub struct Lam { #[flags(S_DEF)] param: Any, body: Any }
    /// }
    /// Var::type_info().unwrap().set_structural_kind(StructuralKind::Var).unwrap();
    /// let (x, y) = (Var::new("x".into()).unwrap(), Var::new("y".into()).unwrap());
    /// let lam = |v: &Var| Lam::new(Any::from(v), Any::from(v)).unwrap();
    /// assert!(structural_eq(&lam(&x), &lam(&y)).unwrap()); // the parameter binds x to y
    /// assert!(!structural_eq(&x, &y).unwrap()); // free: by identity
    /// assert!(structural_eq_with(&x, &y, StructuralOptions { map_free_vars: true }).unwrap());
    /// ```
    pub fn set_structural_kind(&self, kind: StructuralKind) -> Result<()> {
        self.set_attr(Self::ATTR_S_KIND, kind as i64)
    }

    /// The type attribute `name`, looked up on this type and then its ancestors: `None`
    /// when none has it (or the nearest has None).
    pub fn get_attr(&self, name: &str) -> Result<Option<Any>> {
        with_cname(name, |n| {
            let mut out = none_raw();
            // SAFETY: a NUL-terminated name; out receives a new reference.
            let rc = unsafe { sys::ffk_type_get_attr(self.0, n, &mut out) };
            let out = Any(out);
            match rc {
                1 => Ok(Some(out)),
                0 => Ok(None),
                _ => Err(Error::fetch()),
            }
        })
    }

    /// A new object with every field at its default (zero or None where there is none),
    /// without running a constructor (C's `ffk_object_new_reflected`).
    pub fn new_default(&self) -> Result<ObjectRef> {
        // SAFETY: a new reference or NULL with the error set.
        crate::error::check_ptr(unsafe { sys::ffk_object_new_reflected(self.0) })
    }

    /// A new object whose fields hold `values`, one per field in the type's field order
    /// (inherited first, read-only and init-off ones too), converted to the fields' types,
    /// without running a constructor: `ffk_object_new_reflected`, then
    /// `ffk_object_init_fields` on the object no one else holds yet. What
    /// [`Reflect::field_values`] read gives an equal object back. Errors: C's TypeError
    /// for a value of the wrong type ("Mismatched type on field `a` of `T`: expected
    /// `int` but got `str`"), a ValueError for a wrong count ("`T` has 2 fields, not 3"),
    /// a TypeError for a type that is not reflected.
    ///
    /// ```
    /// use ffikit::{Any, AnyView, Reflect};
    /// # ffikit::reflected_type! {
    /// #     #[type_key = "doc.init.Pair", layout = PairLayout]
    /// #     pub struct Pair { a: i64, b: String = "b".to_string() }
    /// # }
    /// let t = Pair::type_info().unwrap();
    /// let p = t.new_with_fields(&[AnyView::from(7i64), Any::from("seven").view()]).unwrap();
    /// assert_eq!((p.field::<i64>("a").unwrap(), p.field::<String>("b").unwrap()), (7, "seven".to_string()));
    /// let e = t.new_with_fields(&[AnyView::from(7i64)]).unwrap_err();
    /// assert_eq!(e.to_string(), "ValueError: `doc.init.Pair` has 2 fields, not 1");
    /// ```
    pub fn new_with_fields(&self, values: &[AnyView<'_>]) -> Result<ObjectRef> {
        let o = self.new_default()?;
        // SAFETY: o was just made by ffk_object_new_reflected and no one else holds it.
        unsafe { o.init_fields(values) }?;
        Ok(o)
    }
}

impl fmt::Debug for TypeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypeInfo({} #{})", self.key(), self.0)
    }
}

/// Reflection on any object handle: fields by name with typed results, methods by name.
/// Implemented for every handle type (`ObjectRef`, `Array<T>`, a type from
/// [`reflected_type!`](crate::reflected_type)...).
///
/// ```
/// use ffikit::{ObjectRef, Reflect, TypeInfo};
/// # ffikit::reflected_type! {
/// #     #[type_key = "doc.reflect.Pair", layout = PairLayout]
/// #     pub struct Pair {
/// #         #[writable(set_a)] a: i64,
/// #         b: String = "b".to_string(),
/// #     }
/// # }
/// let p: ObjectRef = Pair::new(1, "two".into()).unwrap().into();
/// assert_eq!(p.field::<i64>("a").unwrap(), 1);
/// p.set_field("a", 5i64).unwrap();
/// assert_eq!(p.field::<i64>("a").unwrap(), 5);
/// let e = p.set_field("b", "x".to_string()).unwrap_err();
/// assert_eq!(e.kind(), "AttributeError");
/// let e = p.field::<i64>("c").unwrap_err();
/// assert_eq!(e.to_string(), "AttributeError: `doc.reflect.Pair` object has no field `c`");
/// let names: Vec<&str> = p.fields().unwrap().iter().map(|f| f.name()).collect();
/// assert_eq!(names, ["a", "b"]);
/// ```
pub trait Reflect: ObjectType {
    /// The object's type.
    fn type_info(&self) -> TypeInfo {
        TypeInfo(self.as_object().type_index())
    }

    /// Reads field `name` as any value (an AttributeError for an unknown name).
    fn field_any(&self, name: &str) -> Result<Any> {
        with_cname(name, |n| {
            let mut out = none_raw();
            // SAFETY: a live object, a NUL-terminated name and an out value.
            check(unsafe { sys::ffk_object_get_field(self.as_object().as_ptr(), n, &mut out) })?;
            Ok(Any(out))
        })
    }

    /// Reads field `name` as `T` (C's conversion rules: a TypeError "expected int but got
    /// str" when the value is not a `T`).
    fn field<T: Element>(&self, name: &str) -> Result<T> {
        self.field_any(name)?.to::<T>()
    }

    /// Writes field `name`: C converts the value to the field's type, refuses a read-only
    /// field (AttributeError) or a value of the wrong type (TypeError).
    fn set_field<V: Element>(&self, name: &str, value: V) -> Result<()> {
        let v = value.into_any()?;
        self.set_field_view(name, v.view())
    }

    /// `set_field` with a borrowed value.
    fn set_field_view(&self, name: &str, value: AnyView<'_>) -> Result<()> {
        // SAFETY: a live object, a NUL-terminated name and a borrowed valid value.
        with_cname(name, |n| check(unsafe { sys::ffk_object_set_field(self.as_object().as_ptr(), n, value.as_raw()) }))
    }

    /// Calls method `name` (an instance method gets the object first, then `args`).
    fn call_method(&self, name: &str, args: &[AnyView<'_>]) -> Result<Any> {
        with_cname(name, |n| {
            let mut out = none_raw();
            // SAFETY: AnyView is repr(transparent) over ffk_any; out receives an owned value.
            let rc = unsafe { sys::ffk_object_call_method(self.as_object().as_ptr(), n, args.as_ptr().cast(), args.len() as i32, &mut out) };
            check(rc)?;
            Ok(Any(out))
        })
    }

    /// The fields of the object's type (inherited first).
    fn fields(&self) -> Result<Vec<FieldInfo>> {
        self.type_info().fields()
    }

    /// The methods of the object's type.
    fn methods(&self) -> Result<Vec<MethodInfo>> {
        self.type_info().methods()
    }

    /// The value of every field, in the type's field order (inherited first, read-only
    /// ones too), each read as [`FieldInfo::get_any`] reads it: a new reference, so a
    /// container is the very one the field holds, not a copy. Not one atomic snapshot of
    /// an object other threads write meanwhile. A TypeError for an object not made by
    /// reflection (C's `ffk_object_field_values`).
    ///
    /// ```
    /// use ffikit::{Any, Reflect};
    /// # ffikit::reflected_type! {
    /// #     #[type_key = "doc.values.Pair", layout = PairLayout]
    /// #     pub struct Pair { a: i64, b: String = "b".to_string() }
    /// # }
    /// let p = Pair::new(1, "two".into()).unwrap();
    /// let values: Vec<Any> = p.field_values().unwrap();
    /// assert_eq!(values[0].to::<i64>().unwrap(), 1);
    /// assert_eq!(values[1].to::<String>().unwrap(), "two");
    /// let e = ffikit::Array::<i64>::from(vec![1]).field_values().unwrap_err();
    /// assert_eq!(e.kind(), "TypeError");
    /// ```
    fn field_values(&self) -> Result<Vec<Any>> {
        let obj = self.as_object();
        // SAFETY: a plain query on a type index.
        let n = unsafe { sys::ffk_type_num_fields(obj.type_index()) }.max(0);
        let mut out: Vec<sys::ffk_any> = (0..n).map(|_| none_raw()).collect();
        // SAFETY: a live object and n out values, which C fills with owned values (None on error).
        check(unsafe { sys::ffk_object_field_values(obj.as_ptr(), out.as_mut_ptr(), n) })?;
        Ok(out.into_iter().map(Any).collect())
    }

    /// Writes `values` (one per field, in the type's field order) into the fields of this
    /// object, read-only ones too, each converted to its field's type as the constructor
    /// converts it (C's `ffk_object_init_fields`). Every value is converted before any
    /// field is written, so a value of the wrong type (TypeError "Mismatched type on field
    /// ...") or a wrong count (ValueError "`T` has 2 fields, not 3") leaves the object
    /// unchanged. It is how a decoder fills an object made by [`TypeInfo::new_default`]
    /// after making every object of a graph (so a cycle through any field can be rebuilt);
    /// [`TypeInfo::new_with_fields`] does both steps at once, safely.
    ///
    /// # Safety
    /// The object must be fresh from `TypeInfo::new_default` (`ffk_object_new_reflected`),
    /// and no other thread may read or write it during the call: it writes read-only
    /// fields, which other code may assume never change.
    unsafe fn init_fields(&self, values: &[AnyView<'_>]) -> Result<()> {
        // SAFETY: AnyView is repr(transparent) over ffk_any, borrowed for the call; the
        // caller guarantees the object is fresh and not used elsewhere meanwhile.
        check(sys::ffk_object_init_fields(self.as_object().as_ptr(), values.as_ptr().cast(), values.len() as i32))
    }

    /// A new object of the same type holding the same field values (references shared,
    /// not copied). A TypeError for an object not made by reflection.
    fn shallow_copy(&self) -> Result<ObjectRef> {
        // SAFETY: a live object; a new reference or NULL with the error set.
        crate::error::check_ptr(unsafe { sys::ffk_object_shallow_copy(self.as_object().as_ptr()) })
    }
}

impl<T: ObjectType> Reflect for T {}
