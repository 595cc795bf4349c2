//! Reflected types defined in Rust: the [`reflected_type!`](crate::reflected_type) macro and
//! what it expands to.
//!
//! A type defined here is an ordinary reflected type to C (ffk_type_define): a `#[repr(C)]`
//! layout struct whose first member is the object header, then one storage slot per field,
//! at the offsets the macro registers. C, Python and Rust make its objects, read and write
//! its fields and call its methods by name like those of a type defined in C.
//!
//! Invariants:
//! * A field's Rust type decides its slot ([`FieldValue::Slot`]) and its signature type
//!   (`Element::schema()`); registration checks that C chooses the same storage for that
//!   type text (`ffk_field_storage_for`), so the layout and C agree.
//! * The typed handle exists only for an object that C says is an instance of the type (or
//!   a subtype, whose struct starts with this one), so its getters may read the slots at
//!   their offsets. A child type's layout starts with its parent's layout, so a child
//!   handle is a valid parent handle (`Deref` reinterprets one as the other: both are
//!   `repr(transparent)` over the same owning handle). Writable POD slots are C's atomic words: the getters load them
//!   atomically. Object and `ffk_any` slots are swapped by C under a lock, so the getters
//!   read them through the field handle (`ffk_field_get`), never directly.
//! * Registration runs once per process and copy of the code (a `OnceLock`); C returns the
//!   existing index when another copy (another library) defined the same description.
//!   The handle's `schema()` (its key, in signatures and field types) registers the type
//!   first, so a typed Function or a field naming a Rust-defined type parses in C; while a
//!   thread registers the type (its own methods name it), it skips that.
use crate::any::{Any, Element};
use crate::error::{cstring, Error, Result};
use crate::function::Function;
use crate::object::{ObjectRef, ObjectType};
use crate::reflect::{FieldInfo, FieldStorage, TypeInfo};
use crate::sys;
use std::cell::UnsafeCell;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering};

/// The slot of an object-storage field (`str`, `bytes`, containers, object types): an
/// owning `ffk_object *` that C swaps under its field lock. Read it with the field handle.
#[repr(transparent)]
pub struct ObjectSlot(AtomicPtr<sys::ffk_object>);

/// The slot of an `ffk_any`-storage field (`Any`, `Device`, `dtype`): an owning value that
/// C swaps under its field lock. Read it with the field handle.
#[repr(transparent)]
pub struct AnySlot(UnsafeCell<sys::ffk_any>);

/// A Rust type that can be the type of a field of a [`reflected_type!`](crate::reflected_type):
/// its storage slot in the layout struct, and how the typed getter reads it.
///
/// # Safety
/// `Slot` must have the size and alignment of C's storage `STORAGE` for `Self::schema()`,
/// and `read` must only read the slot in ways C's concurrent writers allow.
pub unsafe trait FieldValue: Element {
    /// What the layout struct holds at the field's offset.
    type Slot;
    /// What the typed getter returns: the value for POD fields (a plain atomic load, which
    /// cannot fail), a `Result` for the others (read through C).
    type Read;
    /// The C storage of the slot.
    const STORAGE: FieldStorage;
    /// Reads the field.
    ///
    /// # Safety
    /// `slot` is the field's slot inside `obj`, a live instance of the field's type, and
    /// `field` gives the field's description.
    unsafe fn read(slot: &Self::Slot, obj: &ObjectRef, field: impl FnOnce() -> FieldInfo) -> Self::Read;
}

// SAFETY: int64_t / double / bool slots, loaded atomically as C's writers store them.
unsafe impl FieldValue for i64 {
    type Slot = AtomicI64;
    type Read = i64;
    const STORAGE: FieldStorage = FieldStorage::Int;
    #[inline]
    unsafe fn read(slot: &AtomicI64, _: &ObjectRef, _: impl FnOnce() -> FieldInfo) -> i64 {
        slot.load(Ordering::Relaxed)
    }
}
unsafe impl FieldValue for f64 {
    type Slot = AtomicU64;
    type Read = f64;
    const STORAGE: FieldStorage = FieldStorage::Float;
    #[inline]
    unsafe fn read(slot: &AtomicU64, _: &ObjectRef, _: impl FnOnce() -> FieldInfo) -> f64 {
        f64::from_bits(slot.load(Ordering::Relaxed))
    }
}
unsafe impl FieldValue for bool {
    type Slot = AtomicBool;
    type Read = bool;
    const STORAGE: FieldStorage = FieldStorage::Bool;
    #[inline]
    unsafe fn read(slot: &AtomicBool, _: &ObjectRef, _: impl FnOnce() -> FieldInfo) -> bool {
        slot.load(Ordering::Relaxed)
    }
}

/// Object and `ffk_any` slots: read through C (a new reference taken under C's lock).
macro_rules! via_field_handle {
    ($slot:ty, $storage:ident, $($t:ty),*) => {$(
        // SAFETY: the slot is the storage's pointer or ffk_any; it is only read through C.
        unsafe impl FieldValue for $t {
            type Slot = $slot;
            type Read = Result<$t>;
            const STORAGE: FieldStorage = FieldStorage::$storage;
            unsafe fn read(_: &$slot, obj: &ObjectRef, field: impl FnOnce() -> FieldInfo) -> Result<$t> {
                field().get::<$t, ObjectRef>(obj)
            }
        }
    )*};
}
via_field_handle!(ObjectSlot, Object, String, Vec<u8>);
via_field_handle!(AnySlot, Any, Any, crate::DataType, crate::Device);

// SAFETY: as via_field_handle: every object handle type has object storage.
unsafe impl<T: ObjectType> FieldValue for T {
    type Slot = ObjectSlot;
    type Read = Result<T>;
    const STORAGE: FieldStorage = FieldStorage::Object;
    unsafe fn read(_: &ObjectSlot, obj: &ObjectRef, field: impl FnOnce() -> FieldInfo) -> Result<T> {
        field().get::<T, ObjectRef>(obj)
    }
}

/// `Option` fields (`Optional<T>` in the signature): an object pointer that may be NULL
/// for an object type, `str` or `bytes`; an `ffk_any` for the others (`Optional<int>`...),
/// as C's storage rule says. Read through C like the other non-POD fields.
// SAFETY: as via_field_handle: Optional<an object type> has object storage (NULL is None).
unsafe impl<T: ObjectType> FieldValue for Option<T> {
    type Slot = ObjectSlot;
    type Read = Result<Option<T>>;
    const STORAGE: FieldStorage = FieldStorage::Object;
    unsafe fn read(_: &ObjectSlot, obj: &ObjectRef, field: impl FnOnce() -> FieldInfo) -> Result<Option<T>> {
        field().get::<Option<T>, ObjectRef>(obj)
    }
}
via_field_handle!(ObjectSlot, Object, Option<String>, Option<Vec<u8>>);
via_field_handle!(AnySlot, Any, Option<i64>, Option<f64>, Option<bool>, Option<crate::DataType>, Option<crate::Device>);

/// A type that a [`reflected_type!`](crate::reflected_type) may name as its parent: a type
/// of that macro, or `ObjectRef` (the root, `Object`, whose layout is the object header).
/// The macro implements it; a child's layout struct starts with `Self::Layout`.
///
/// # Safety
/// `Layout` must be the `#[repr(C)]` instance layout of the type whose index
/// `reflected_index` returns, starting with the object header.
pub unsafe trait Reflected: ObjectType {
    /// The instance layout: the object header for `ObjectRef`, the macro's layout struct
    /// for its types.
    type Layout;
    /// The type's index (registering a macro type on first use).
    fn reflected_index() -> Result<i32>;
}

// SAFETY: the root: every object starts with the header.
unsafe impl Reflected for ObjectRef {
    type Layout = sys::ffk_object;
    fn reflected_index() -> Result<i32> {
        Ok(sys::ffk_type_index::FFK_TYPE_OBJECT.0 as i32)
    }
}

/// The parent named in a `reflected_type!`'s attribute, or `ObjectRef` when none is.
#[doc(hidden)]
#[macro_export]
macro_rules! __reflected_parent {
    () => { $crate::ObjectRef };
    ($p:ty) => { $p };
}

/// The owning handle inside a typed handle of a `reflected_type!`: made only for objects
/// that are instances of the type, so the getters may read the layout.
#[doc(hidden)]
#[derive(Clone)]
#[repr(transparent)]
pub struct Handle(ObjectRef);

impl Handle {
    /// # Safety
    /// `o` must be an instance of the type whose layout the handle's owner reads.
    #[doc(hidden)]
    pub unsafe fn new_unchecked(o: ObjectRef) -> Handle {
        Handle(o)
    }
    #[doc(hidden)]
    pub fn object(&self) -> &ObjectRef {
        &self.0
    }
    #[doc(hidden)]
    pub fn into_object(self) -> ObjectRef {
        self.0
    }
}

/// What registration resolved: the type and its own fields' handles, in declaration order.
#[doc(hidden)]
pub struct TypeData {
    pub info: TypeInfo,
    pub fields: Vec<FieldInfo>,
}

/// One field as the macro describes it.
#[doc(hidden)]
pub struct FieldSpec {
    pub name: &'static str,
    pub offset: usize,
    pub schema: String,
    pub storage: FieldStorage,
    pub flags: u32,
    pub default: Option<Any>,
    pub doc: &'static [&'static str],
}

/// One method as the macro describes it.
#[doc(hidden)]
pub struct MethodSpec {
    pub name: &'static str,
    pub function: Function,
    pub is_static: bool,
    pub doc: &'static [&'static str],
}

/// The text of `///` lines: each line without the one leading space rustdoc keeps.
#[doc(hidden)]
pub fn doc_text(lines: &[&str]) -> Option<String> {
    let text = lines.iter().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect::<Vec<_>>().join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Registers a type the macro describes (`ffk_type_define` with its fields, then each
/// method with `ffk_type_add_method`, since a method's signature may name the type itself)
/// and resolves its fields. A ValueError when a field's Rust type does not store as C
/// stores its type text, or what C's definition raises.
#[doc(hidden)]
pub fn define_type(
    key: &str,
    doc: &[&str],
    parent_index: i32,
    instance_size: usize,
    fields: Vec<FieldSpec>,
    methods: impl FnOnce() -> Result<Vec<MethodSpec>>,
) -> Result<TypeData> {
    for f in &fields {
        let storage = FieldStorage::for_type(&f.schema)?;
        if storage != f.storage {
            return Err(Error::new(
                "ValueError",
                &format!(
                    "field `{}` of `{}`: type `{}` is stored as {:?} but its Rust type holds {:?}",
                    f.name, key, f.schema, storage, f.storage
                ),
            ));
        }
    }
    let ckey = cstring(key)?;
    let cdoc = doc_text(doc).map(|d| cstring(&d)).transpose()?;
    let names = fields.iter().map(|f| cstring(f.name)).collect::<Result<Vec<CString>>>()?;
    let types = fields.iter().map(|f| cstring(&f.schema)).collect::<Result<Vec<CString>>>()?;
    let docs = fields.iter().map(|f| doc_text(f.doc).map(|d| cstring(&d)).transpose()).collect::<Result<Vec<Option<CString>>>>()?;
    let defs: Vec<sys::ffk_field_def> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| sys::ffk_field_def {
            name: names[i].as_ptr(),
            offset: f.offset,
            type_: types[i].as_ptr(),
            flags: f.flags | if f.default.is_some() { crate::FieldFlags::HAS_DEFAULT.bits() } else { 0 },
            default_value: f.default.as_ref().map_or_else(crate::any::none_raw, |d| *d.as_raw()),
            doc: docs[i].as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
        })
        .collect();
    let def = sys::ffk_type_def {
        key: ckey.as_ptr(),
        parent_index,
        instance_size,
        fields: defs.as_ptr(),
        nfields: defs.len() as i32,
        methods: std::ptr::null(),
        nmethods: 0,
        constructor: std::ptr::null_mut(),
        finalize: None,
        doc: cdoc.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
    };
    // SAFETY: every pointer in def lives until the call returns; C copies what it keeps
    // (strings, converted defaults).
    let index = unsafe { sys::ffk_type_define(&def) };
    if index < 0 {
        return Err(Error::fetch());
    }
    let info = TypeInfo::of(index)?;
    let resolved = fields.iter().map(|f| info.field(f.name)).collect::<Result<Vec<FieldInfo>>>()?;
    for m in methods()? {
        let doc = doc_text(m.doc);
        info.add_method(m.name, &m.function, m.is_static, doc.as_deref())?;
    }
    Ok(TypeData { info, fields: resolved })
}

/// Sets a thread-local flag for its lifetime (cleared on drop, also by a panic).
#[doc(hidden)]
pub struct Flag(&'static std::thread::LocalKey<std::cell::Cell<bool>>);

impl Flag {
    #[doc(hidden)]
    pub fn set(key: &'static std::thread::LocalKey<std::cell::Cell<bool>>) -> Flag {
        key.with(|f| f.set(true));
        Flag(key)
    }
}

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.with(|f| f.set(false));
    }
}

/// Checks that `o` is an instance of `index` (C's TypeError text otherwise).
#[doc(hidden)]
pub fn expect_instance(o: &ObjectRef, index: i32) -> Result<()> {
    crate::object::expect_instance(o, index)
}

/// The result of registration, cloned out of its `OnceLock`.
#[doc(hidden)]
pub fn registered(r: &'static Result<TypeData>) -> Result<&'static TypeData> {
    match r {
        Ok(d) => Ok(d),
        Err(e) => Err(e.clone()),
    }
}

/// Defines a reflected object type in Rust: a typed handle, a `#[repr(C)]` layout struct
/// whose first member is the object header, and the type's registration with C (once, on
/// first use, thread-safe) with its fields, defaults, flags, docs and methods.
///
/// ```
/// use ffikit::{AnyView, ObjectRef, Reflect, Result};
///
/// ffikit::reflected_type! {
///     /// A point made in Rust.
///     #[type_key = "doc.Point", layout = PointLayout]
///     pub struct Point {
///         /// The x coordinate.
///         #[writable(set_x)]
///         x: f64 = 0.0,
///         /// The y coordinate.
///         #[writable(set_y)]
///         y: f64 = 0.0,
///         /// A name, read-only after construction.
///         #[flags(COMPARE_OFF)]
///         name: String = "p".to_string(),
///     }
///     methods {
///         /// The squared distance to the origin.
///         fn norm2(this: Point) -> Result<f64> {
///             Ok(this.x() * this.x() + this.y() * this.y())
///         }
///         /// A copy moved by (dx, dy).
///         fn moved(this: Point, dx: f64, dy: f64) -> Result<Point> {
///             Point::new(this.x() + dx, this.y() + dy, this.name()?)
///         }
///     }
///     static_methods {
///         /// The point (t, t).
///         fn diagonal(t: f64) -> Result<Point> {
///             Point::new(t, t, "diagonal".into())
///         }
///     }
/// }
///
/// let p = Point::new(3.0, 4.0, "a".into()).unwrap();
/// assert_eq!((p.x(), p.y(), p.name().unwrap()), (3.0, 4.0, "a".to_string()));
/// p.set_x(6.0).unwrap();
/// assert_eq!(p.x(), 6.0);
/// // By name and through C: the same fields and methods.
/// assert_eq!(p.field::<f64>("x").unwrap(), 6.0);
/// assert_eq!(p.call_method("norm2", &[]).unwrap().to::<f64>().unwrap(), 52.0);
/// let q = p.call_method("moved", &[AnyView::from(1.0), AnyView::from(1.0)]).unwrap();
/// assert_eq!(q.to_string(), "doc.Point(x=7.0, y=5.0, name=\"a\")"); // C's repr, by reflection
/// let q: Point = q.to().unwrap();
/// assert_eq!((q.x(), q.y(), q.name().unwrap()), (7.0, 5.0, "a".to_string()));
/// // Defaults, keyword construction and C's messages.
/// let d = Point::create(&[], &[("y", AnyView::from(2i64))]).unwrap();
/// assert_eq!((d.x(), d.y(), d.name().unwrap()), (0.0, 2.0, "p".to_string()));
/// let e = p.set_field("name", "b".to_string()).unwrap_err();
/// assert_eq!(e.kind(), "AttributeError");
/// let diag = p.call_method("diagonal", &[AnyView::from(2.0)]).unwrap(); // no object passed
/// assert_eq!(diag.to::<Point>().unwrap().y(), 2.0);
/// let info = Point::type_info().unwrap();
/// assert!(info.find_method("diagonal").unwrap().unwrap().is_static());
/// let x = info.field("x").unwrap();
/// assert_eq!((x.type_text(), x.doc()), ("float", Some("The x coordinate.")));
/// assert_eq!(info.doc(), Some("A point made in Rust."));
/// assert_eq!(std::mem::offset_of!(PointLayout, x), x.offset());
/// ```
///
/// A type may derive from another type of this macro (`parent = Base` in the attribute):
/// its layout starts with the parent's (the `header` member is then `BaseLayout`),
/// inherited fields come first in its field order, C sees it as a subtype
/// (`ffk_type_is_instance`), and the child handle is usable as the parent's: `Deref` and
/// `AsRef<Base>` (the parent's getters, setters and methods), `From<Child> for Base` (the
/// upcast), `TryFrom<Base> for Child` (the checked downcast). A field of type `Option<T>`
/// is `Optional<T>` in C: None or a `T` (or, for an object type, a subtype's instance).
///
/// ```
/// use ffikit::{Any, AnyView, ObjectType, Reflect, Result};
///
/// ffikit::reflected_type! {
///     #[type_key = "doc.Animal", layout = AnimalLayout]
///     pub struct Animal {
///         #[writable(set_legs)]
///         legs: i64 = 4,
///     }
/// }
/// ffikit::reflected_type! {
///     #[type_key = "doc.Dog", layout = DogLayout, parent = Animal]
///     pub struct Dog {
///         /// Its friend, if it has one.
///         #[writable(set_friend)]
///         friend: Option<Animal> = None,
///         #[writable(set_nick)]
///         nick: Option<String> = None,
///     }
/// }
///
/// fn legs_of(a: &Animal) -> i64 { a.legs() }
///
/// let d = Dog::new(None, Some("rex".into())).unwrap(); // inherited fields: defaults
/// assert_eq!((legs_of(&d), d.nick().unwrap().as_deref()), (4, Some("rex")));
/// d.set_legs(3).unwrap(); // the parent's setter, through Deref
/// let cat = Animal::new(4).unwrap();
/// d.set_friend(Some(cat.clone())).unwrap();
/// assert!(d.friend().unwrap().unwrap().as_object().ptr_eq(cat.as_object()));
/// d.set_nick(None).unwrap();
/// assert_eq!(d.nick().unwrap(), None);
/// let e = d.set_field("friend", 5i64).unwrap_err(); // C's conversion to Optional<doc.Animal>
/// assert_eq!(e.kind(), "TypeError");
/// assert_eq!(d.fields().unwrap().iter().map(|f| f.name()).collect::<Vec<_>>(), ["legs", "friend", "nick"]);
/// let a: Animal = d.clone().into(); // upcast: the same object
/// assert_eq!(a.to_string(), "doc.Dog(legs=3, friend=doc.Animal(legs=4), nick=None)");
/// assert!(Dog::try_from(a).is_ok() && Dog::try_from(cat).is_err()); // checked downcasts
/// ```
///
/// Grammar: doc lines, then `#[type_key = "...", layout = LayoutName]` or
/// `#[type_key = "...", layout = LayoutName, parent = ParentType]`, then the handle
/// struct with its fields. Each field is `name: RustType` with an optional `= default`;
/// before it, its doc lines, an optional `#[writable(setter_name)]` (read-only otherwise)
/// and an optional `#[flags(KW_ONLY, INIT_OFF, REPR_OFF, COMPARE_OFF)]`. The field's
/// signature type is the Rust type's (`i64` "int", `f64` "float", `bool`, `String` "str",
/// `Vec<u8>` "bytes", `Any`, `Device`, `DataType`, `Array<T>`, `Map<K, V>`, `List<T>`,
/// `Dict<K, V>`, `ObjectRef` "Object", `Function`, `Tensor`, or another type of this macro),
/// or `Option<T>` (`Optional<T>`) of one of them other than `Any` (which holds None itself).
/// An optional `methods { ... }` block lists instance methods: `fn name(this: Type, args...)
/// -> Result<R> { ... }` with `Element` arguments, registered as typed Functions (C checks
/// the arguments); an optional `static_methods { ... }` block after it lists static ones
/// (`fn name(args...) -> Result<R> { ... }`, called without an object).
///
/// It generates, on the handle: `type_index()` and `type_info()` (registering on first
/// use), `new(every field by name)`, `create(positional, named)`, a getter per field (the
/// value for `i64`/`f64`/`bool`, read with an atomic load at the field's offset; a
/// `Result` for the others, read through the field handle), the named setters, and the
/// `ObjectType` impl, so the handle is an element type, a downcast target and an argument
/// of typed Functions. `new` passes every field by name, so it does not suit a type with
/// an `INIT_OFF` field: use `create`. With a parent, `new` takes only the type's own
/// fields and the inherited ones take their defaults (a required inherited field makes it
/// C's TypeError): `create` gives every field, positionally (C's rule: required fields
/// first, then those with a default, each in field order, inherited ones first) or by name.
#[macro_export]
macro_rules! reflected_type {
    (
        $(#[doc = $doc:expr])*
        #[type_key = $key:literal, layout = $layout:ident $(, parent = $parent:ty)? $(,)?]
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $fdoc:expr])*
                $(#[writable($setter:ident)])?
                $(#[flags($($flag:ident),* $(,)?)])?
                $field:ident : $fty:ty $(= $default:expr)?
            ),* $(,)?
        }
        $(
            methods {
                $(
                    $(#[doc = $mdoc:expr])*
                    fn $method:ident ( $($arg:ident : $aty:ty),* $(,)? ) -> $ret:ty $body:block
                )*
            }
        )?
        $(
            static_methods {
                $(
                    $(#[doc = $sdoc:expr])*
                    fn $smethod:ident ( $($sarg:ident : $saty:ty),* $(,)? ) -> $sret:ty $sbody:block
                )*
            }
        )?
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone)]
        #[repr(transparent)]
        $vis struct $name($crate::define::Handle);

        #[doc = concat!("The instance layout of `", $key, "`: the parent's layout (the object header for a root type), then each field's storage.")]
        #[repr(C)]
        $vis struct $layout {
            /// The parent type's layout (for a root type, the object header `ffk_object`).
            pub header: <$crate::__reflected_parent!($($parent)?) as $crate::define::Reflected>::Layout,
            $(
                $(#[doc = $fdoc])*
                pub $field: <$fty as $crate::define::FieldValue>::Slot,
            )*
        }

        const _: () = {
            #[allow(non_camel_case_types, dead_code)]
            #[derive(Clone, Copy)]
            enum __Field { $($field),* }

            static DATA: ::std::sync::OnceLock<$crate::Result<$crate::define::TypeData>> = ::std::sync::OnceLock::new();
            ::std::thread_local! {
                /// True while this thread registers the type (its methods' signatures name it).
                static DEFINING: ::std::cell::Cell<bool> = const { ::std::cell::Cell::new(false) };
            }

            #[allow(dead_code)]
            impl $name {
                fn __data() -> $crate::Result<&'static $crate::define::TypeData> {
                    $crate::define::registered(DATA.get_or_init(|| {
                        let _defining = $crate::define::Flag::set(&DEFINING);
                        let fields = || -> $crate::Result<::std::vec::Vec<$crate::define::FieldSpec>> {
                            ::std::result::Result::Ok(::std::vec![$(
                                $crate::define::FieldSpec {
                                    name: stringify!($field),
                                    offset: ::std::mem::offset_of!($layout, $field),
                                    schema: <$fty as $crate::Element>::schema(),
                                    storage: <$fty as $crate::define::FieldValue>::STORAGE,
                                    flags: 0 $( | { let _ = stringify!($setter); $crate::FieldFlags::WRITABLE.bits() } )?
                                        $($( | $crate::FieldFlags::$flag.bits() )*)?,
                                    default: {
                                        #[allow(unused_mut)]
                                        let mut d: ::std::option::Option<$crate::Any> = ::std::option::Option::None;
                                        $( d = ::std::option::Option::Some(<$fty as $crate::Element>::into_any($default)?); )?
                                        d
                                    },
                                    doc: &[$($fdoc),*],
                                },
                            )*])
                        };
                        let methods = || -> $crate::Result<::std::vec::Vec<$crate::define::MethodSpec>> {
                            ::std::result::Result::Ok(::std::vec![$($(
                                $crate::define::MethodSpec {
                                    name: stringify!($method),
                                    function: $crate::Function::from_typed(
                                        concat!($key, ".", stringify!($method)),
                                        |($($arg,)*): ($($aty,)*)| -> $ret { $body },
                                    )?,
                                    is_static: false,
                                    doc: &[$($mdoc),*],
                                },
                            )*)? $($(
                                $crate::define::MethodSpec {
                                    name: stringify!($smethod),
                                    function: $crate::Function::from_typed(
                                        concat!($key, ".", stringify!($smethod)),
                                        |($($sarg,)*): ($($saty,)*)| -> $sret { $sbody },
                                    )?,
                                    is_static: true,
                                    doc: &[$($sdoc),*],
                                },
                            )*)?])
                        };
                        let parent = <$crate::__reflected_parent!($($parent)?) as $crate::define::Reflected>::reflected_index()?;
                        $crate::define::define_type($key, &[$($doc),*], parent, ::std::mem::size_of::<$layout>(), fields()?, methods)
                    }))
                }

                /// The type's index, registering the type on first use (C's error if that failed).
                pub fn type_index() -> $crate::Result<i32> {
                    ::std::result::Result::Ok(Self::__data()?.info.index())
                }

                /// The type's description (registering it on first use).
                pub fn type_info() -> $crate::Result<$crate::TypeInfo> {
                    ::std::result::Result::Ok(Self::__data()?.info)
                }

                /// A new object from every field's value, passed by name to the constructor.
                #[allow(clippy::too_many_arguments)]
                pub fn new($($field: $fty),*) -> $crate::Result<Self> {
                    let values: ::std::vec::Vec<$crate::Any> = ::std::vec![$(<$fty as $crate::Element>::into_any($field)?),*];
                    let named: ::std::vec::Vec<(&str, $crate::AnyView<'_>)> =
                        ::std::vec![$((stringify!($field), values[__Field::$field as usize].view())),*];
                    Self::create(&[], &named)
                }

                /// A new object from positional and named values, by the type's constructor
                /// (C's conversions and messages).
                pub fn create(args: &[$crate::AnyView<'_>], kwargs: &[(&str, $crate::AnyView<'_>)]) -> $crate::Result<Self> {
                    let o = Self::__data()?.info.create(args, kwargs)?;
                    <Self as $crate::ObjectType>::from_object(o)
                }

                fn __layout(&self) -> &$layout {
                    // SAFETY: the handle holds an instance of the type (or a subtype, whose
                    // struct starts with this layout); the reference lives as long as the handle.
                    unsafe { &*(self.0.object().as_ptr() as *const $layout) }
                }

                $(
                    $(#[doc = $fdoc])*
                    #[inline]
                    pub fn $field(&self) -> <$fty as $crate::define::FieldValue>::Read {
                        // SAFETY: the slot is this field's, inside the live object self holds.
                        unsafe {
                            <$fty as $crate::define::FieldValue>::read(&self.__layout().$field, self.0.object(), || {
                                Self::__data().expect("a handle exists only once the type is registered").fields[__Field::$field as usize]
                            })
                        }
                    }
                    $(
                        #[doc = concat!("Writes `", stringify!($field), "` (through C: converted, atomic for readers).")]
                        pub fn $setter(&self, value: $fty) -> $crate::Result<()> {
                            Self::__data()?.fields[__Field::$field as usize].set(self, value)
                        }
                    )?
                )*
            }

            // SAFETY: repr(transparent) over ObjectRef (through Handle); from_object
            // accepts only instances of the registered type.
            unsafe impl $crate::ObjectType for $name {
                /// The real index is known at run time (`type_index()`); downcasts check it.
                const TYPE_INDEX: i32 = $crate::sys::ffk_type_index::FFK_TYPE_OBJECT.0 as i32;
                /// The key. Registers the type first (unless this thread is registering it),
                /// so that signatures and field types naming it parse in C.
                fn schema() -> ::std::string::String {
                    if !DEFINING.with(|d| d.get()) {
                        let _ = Self::__data(); // a failure shows where the key is used
                    }
                    $key.into()
                }
                fn from_object(o: $crate::ObjectRef) -> $crate::Result<Self> {
                    $crate::define::expect_instance(&o, Self::type_index()?)?;
                    // SAFETY: checked just above.
                    ::std::result::Result::Ok($name(unsafe { $crate::define::Handle::new_unchecked(o) }))
                }
                fn as_object(&self) -> &$crate::ObjectRef {
                    self.0.object()
                }
                fn into_object(self) -> $crate::ObjectRef {
                    self.0.into_object()
                }
            }

            // SAFETY: the layout is this type's, starting with the parent's layout.
            unsafe impl $crate::define::Reflected for $name {
                type Layout = $layout;
                fn reflected_index() -> $crate::Result<i32> {
                    Self::type_index()
                }
            }

            $(
                /// The handle seen as its parent's: every instance of this type is one of
                /// the parent's, so the parent's getters, setters and methods apply.
                impl ::std::ops::Deref for $name {
                    type Target = $parent;
                    fn deref(&self) -> &$parent {
                        // SAFETY: both handles are repr(transparent) over the same owning
                        // handle, and an instance of this type is one of the parent's
                        // (ffk_type_define made it a subtype), whose layout starts this one.
                        unsafe { &*(self as *const $name as *const $parent) }
                    }
                }
                impl ::std::convert::AsRef<$parent> for $name {
                    fn as_ref(&self) -> &$parent {
                        self
                    }
                }
                /// The upcast: the same object, as the parent's handle.
                impl ::std::convert::From<$name> for $parent {
                    fn from(h: $name) -> $parent {
                        <$name as ::std::ops::Deref>::deref(&h).clone()
                    }
                }
                /// The checked downcast (`ffk_type_is_instance`): C's TypeError when the
                /// object is not an instance of this type.
                impl ::std::convert::TryFrom<$parent> for $name {
                    type Error = $crate::Error;
                    fn try_from(p: $parent) -> $crate::Result<Self> {
                        <Self as $crate::ObjectType>::from_object(<$parent as $crate::ObjectType>::into_object(p))
                    }
                }
            )?

            impl ::std::fmt::Debug for $name {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    ::std::fmt::Debug::fmt(self.0.object(), f)
                }
            }
            impl ::std::fmt::Display for $name {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    ::std::fmt::Display::fmt(self.0.object(), f)
                }
            }
            impl ::std::cmp::PartialEq for $name {
                fn eq(&self, other: &Self) -> bool {
                    self.0.object() == other.0.object()
                }
            }
            impl ::std::convert::From<$name> for $crate::ObjectRef {
                fn from(h: $name) -> $crate::ObjectRef {
                    h.0.into_object()
                }
            }
            impl ::std::convert::TryFrom<$crate::ObjectRef> for $name {
                type Error = $crate::Error;
                fn try_from(o: $crate::ObjectRef) -> $crate::Result<Self> {
                    <Self as $crate::ObjectType>::from_object(o)
                }
            }
        };
    };
}
