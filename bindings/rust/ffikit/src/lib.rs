//! Safe Rust API over ffikit, the C toolkit for passing values between C, Python and Rust.
//!
//! * [`Any`] owns a 16-byte tagged value, [`AnyView`] borrows one; [`Kind`] is its kind
//!   for `match`. Conversions back use the C accessors' rules and error texts.
//! * Object handles: [`ObjectRef`] and one type per kind ([`Str`], [`Bytes`], [`Error`],
//!   [`Function`], [`Shape`], [`Array`], [`Tuple`], [`Map`], [`List`], [`Dict`],
//!   [`Tensor`], [`Module`], [`WeakRef`]): `Clone` retains, `Drop` releases, downcasts are checked,
//!   `Debug`/`Display` print the C repr, `PartialEq`/`Hash` are C's structural ones.
//! * [`Array`]/[`Map`]/[`Tuple`] are copy-on-write: mutators take `&mut self` and a clone
//!   never sees a change. [`List`]/[`Dict`] are shared: mutators take `&self` and every
//!   clone sees every change.
//! * Fallible calls return [`Result`], whose error is the C Error object itself.
//! * Reflection ([`Reflect`], on every handle): fields by name with typed results
//!   (`obj.field::<i64>("a")?`, `obj.set_field("a", 5i64)?`), methods by name
//!   (`obj.call_method("sum", &[])?`), and the descriptions C holds ([`TypeInfo`],
//!   [`FieldInfo`], [`MethodInfo`]). [`reflected_type!`] defines a reflected type in Rust
//!   that C and Python use like one defined in C.
//! * Structural tools on any value ([`structural_eq`], [`structural_hash`],
//!   [`first_structural_mismatch`] with its [`AccessPath`]s, [`deep_copy`]) and the JSON
//!   graph round trip ([`to_json_graph`], [`from_json_graph`]), TVM-FFI's format. Types
//!   supply hooks as type attributes ([`TypeInfo::set_attr`]).
//! * Enums ([`enums`]): look up the singleton members of an enum type (C's ffikit/enum.h,
//!   Python's `ffikit.dataclasses.Enum`) by name or value, list them, read attribute columns.
//! * Cycles: reference counting never frees objects that hold each other (no cycle
//!   collector, as TVM-FFI). A [`WeakRef`] in a field breaks such a cycle;
//!   [`find_cycles`] reports the ones left in a value.
//! * Streams ([`stream`]): the current stream per (thread, device) that ffikit's CUDA work
//!   runs on ([`stream::use_raw_stream`] gives a [`StreamGuard`] that restores it),
//!   ordering across streams, and DLPack's `stream` values on both sides.
//!
//! ```
//! use ffikit::{Array, Dict, List};
//! let mut a: Array<i64> = (1..=3).collect();
//! let snapshot = a.clone();
//! a.push(4).unwrap();
//! assert_eq!((a.len(), snapshot.len()), (4, 3));
//!
//! let l: List<String> = List::new().unwrap();
//! let same = l.clone();
//! same.push("shared".into()).unwrap();
//! assert_eq!(l.len(), 1);
//!
//! let d: Dict<String, i64> = vec![("x".to_string(), 1)].into();
//! assert_eq!(d.get(&"x".to_string()).unwrap(), Some(1));
//! ```
//!
//! # Threads: `Send` and `Sync`
//!
//! | type | Send | Sync | why |
//! | --- | --- | --- | --- |
//! | `Any`, `AnyView<'a>`, `ObjectRef` | yes | yes | refcounts are atomic; every object kind is one of the rows below |
//! | `Str`, `Bytes`, `Shape` | yes | yes | immutable once made |
//! | `Array<T>`, `Tuple`, `Map<K, V>` | yes | yes | never changed while shared: mutators need `&mut self` on one handle, and C copies a shared object before changing it |
//! | `List<T>`, `Dict<K, V>` | yes | yes | every C operation is atomic (a per-object lock); iterators report concurrent changes as an error item |
//! | `Function` | yes | yes | immutable; `from_packed`/`from_typed` require `Send + Sync + 'static` closures, because any thread of any language may call them |
//! | `Module` | yes | yes | loading and lookups are thread-safe in C |
//! | `Error` | yes | yes | kind and message are immutable; the lazily built backtrace text and appended frames are guarded by a Rust lock |
//! | `Tensor` | yes | yes | metadata is immutable; element slices follow Rust's borrow rules (`as_mut_slice` needs `&mut self` and a tensor that shares its storage with nobody) |
//! | `TypeInfo`, `FieldInfo`, `MethodInfo` | yes | yes | C's type descriptions are immutable and live until exit |
//! | `AccessPath`, `AccessStep` | yes | yes | a path is an immutable C object; a step is its kind and key |
//! | a [`reflected_type!`] handle | yes | yes | C makes each field write atomic for readers; the getters load POD slots atomically and read the others through C |
//! | `RawStream` | yes | yes | an opaque stream handle (a `cudaStream_t`), a value; ffikit never owns or destroys it |
//! | `StreamGuard` | no | no | it restores the stream table of the thread that made it, and that table is per thread |
//! | iterators (`ListIter`, `DictIter`, `array::Iter`) | no | no | they borrow their container and are meant for one thread |
//!
//! No safe API reaches the reference-count word or returns a borrowed pointer that can
//! outlive its owner.
#![warn(missing_docs)]

pub use ffikit_sys as sys;

mod access_path;
mod any;
pub mod array;
pub mod define;
pub mod dict;
pub mod enums;
mod elemref;
mod error;
pub mod function;
pub mod list;
pub mod map;
mod object;
mod reflect;
mod serialization;
mod string;
mod structural;
pub mod tensor;
mod types;
mod visit;
mod weak;

pub use access_path::{AccessKind, AccessPath, AccessStep};
pub use any::{Any, AnyView, Element, Kind};
pub use array::{Array, Tuple};
pub use dict::Dict;
pub use elemref::ElementRef;
pub use error::{Error, ErrorKind, Result};
pub use function::{Args, Function, Module};
pub use list::List;
pub use map::Map;
pub use object::{ObjectRef, ObjectType};
pub use reflect::{FieldFlags, FieldInfo, FieldStorage, MethodInfo, Reflect, StructuralKind, TypeInfo};
pub use serialization::{from_json_graph, from_json_graph_with_metadata, to_json_graph};
pub use string::{Bytes, Shape, Str};
pub use structural::{
    deep_copy, first_structural_mismatch, first_structural_mismatch_with, structural_eq, structural_eq_with,
    structural_hash, structural_hash_with, StructuralOptions,
};
pub use tensor::{DLPack, Tensor};
pub use visit::{
    structural_map, structural_mutate, structural_visit, structural_walk, DefRegion, Mutator, Visitor, WalkControl, WalkOrder,
    WalkStep,
};
pub use types::{DataType, Device, Scalar};
pub use weak::{find_cycles, WeakRef};

// Streams: the current stream per (thread, device) and ordering across streams.
pub mod stream;
pub use stream::{RawStream, StreamGuard};

/// The ABI version of the loaded library (`major << 16 | minor`).
///
/// ```
/// assert_eq!(ffikit::abi_version(), ffikit::sys::FFK_ABI_VERSION);
/// ```
pub fn abi_version() -> u32 {
    // SAFETY: cannot fail.
    unsafe { sys::ffk_abi_version() }
}
