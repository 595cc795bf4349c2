//! Values to and from JSON text that survives a process and a language
//! (ffikit/serialization.h): TVM-FFI's JSON graph format, so a document written here reads
//! in Python's `ffikit.serialization`, in C, and in tvm_ffi (for the types both know), and
//! the reverse.
//!
//! A document is `{"root_index": i, "nodes": [...], "metadata": {...}}`: one node per
//! distinct value, shared values written once, children before parents. The writer, the
//! parser (a document is untrusted input: every malformed one is a ValueError, never a
//! crash) and every message are C's; this module converts the text and the results.
use crate::any::{none_raw, Any, AnyView};
use crate::error::{check, Error, Result};
use crate::map::Map;
use crate::sys;

/// Writes `v` as a JSON graph document, with `metadata` (str keys, JSON-able values:
/// None, bool, int, float, str, sequences and str-keyed maps of them) under "metadata".
///
/// Errors are C's: a TypeError for a value that cannot be written (a tensor, a Function,
/// an object of a type reflection does not rebuild) or a metadata value that is not
/// JSON-able; a ValueError for a cycle ("Cycle detected during serialization: ..."); a
/// RuntimeError for nesting deeper than the limit; or what a type's `__data_to_json__`
/// hook raised.
///
/// ```
/// use ffikit::{from_json_graph, structural_eq, to_json_graph, Any, Array, Map};
/// let v: Array<Any> = vec![Any::from(1i64), Any::from("hello"), Any::from(1i64)].into();
/// let text = to_json_graph(&v, None).unwrap();
/// assert_eq!(text, r#"{"root_index":2,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"hello"},{"type":"ffi.Array","data":[0,1,0]}]}"#);
/// assert!(structural_eq(&from_json_graph(&text).unwrap(), &v).unwrap());
/// let meta: Map<String, Any> = vec![("author".to_string(), Any::from("rust"))].into();
/// assert!(to_json_graph(1i64, Some(&meta)).unwrap().ends_with(r#""metadata":{"author":"rust"}}"#));
/// ```
pub fn to_json_graph<'a>(v: impl Into<AnyView<'a>>, metadata: Option<&Map<String, Any>>) -> Result<String> {
    let v = v.into();
    let meta = metadata.map(AnyView::from);
    let mut out = none_raw();
    // SAFETY: borrowed valid values (or NULL for no metadata); out receives a new str.
    check(unsafe {
        sys::ffk_to_json_graph(v.as_raw(), meta.as_ref().map_or(std::ptr::null(), |m| m.as_raw()), &mut out)
    })?;
    let text = Any(out);
    Ok(text.as_str()?.to_owned())
}

/// Reads a JSON graph document (from this crate, Python, C or tvm_ffi) into a new value.
/// Objects are rebuilt field by field (their constructors are not called); shared nodes
/// come back shared.
///
/// Errors are C's: a ValueError "Invalid JSON Object Graph: ..." naming the problem (not
/// JSON, with the parser's message and offset; a missing or mistyped key; a node index out
/// of range; a node reachable from itself; an unknown type key or field; a field value of
/// the wrong type), a TypeError for an object type that cannot be rebuilt, a RuntimeError
/// for nesting deeper than the limit, or what a `__data_from_json__` hook raised.
///
/// ```
/// use ffikit::{from_json_graph, ErrorKind};
/// let v = from_json_graph(r#"{"root_index":0,"nodes":[{"type":"int","data":42}]}"#).unwrap();
/// assert_eq!(v.to::<i64>().unwrap(), 42);
/// let e = from_json_graph(r#"{"root_index":3,"nodes":[]}"#).unwrap_err();
/// assert_eq!(e.error_kind(), ErrorKind::Value);
/// assert!(e.message().starts_with("Invalid JSON Object Graph"), "{}", e.message());
/// ```
pub fn from_json_graph(text: &str) -> Result<Any> {
    let mut out = none_raw();
    // SAFETY: text/len describe a valid buffer; out receives an owned value.
    check(unsafe { sys::ffk_from_json_graph(text.as_ptr().cast(), text.len(), &mut out, std::ptr::null_mut()) })?;
    Ok(Any(out))
}

/// [`from_json_graph`] that also returns the document's "metadata" (`None` when absent):
/// JSON objects come back as Maps with str keys, arrays as Arrays.
///
/// ```
/// use ffikit::{from_json_graph_with_metadata, Any};
/// let doc = r#"{"root_index":0,"nodes":[{"type":"None"}],"metadata":{"version":[1,2]}}"#;
/// let (v, meta) = from_json_graph_with_metadata(doc).unwrap();
/// assert!(v.is_none());
/// let meta = meta.unwrap();
/// assert_eq!(meta.get(&"version".to_string()).unwrap().to::<ffikit::Array<i64>>().unwrap().iter().collect::<Vec<_>>(), [1, 2]);
/// ```
pub fn from_json_graph_with_metadata(text: &str) -> Result<(Any, Option<Map<String, Any>>)> {
    let (mut out, mut meta) = (none_raw(), none_raw());
    // SAFETY: text/len describe a valid buffer; out and meta receive owned values.
    check(unsafe { sys::ffk_from_json_graph(text.as_ptr().cast(), text.len(), &mut out, &mut meta) })?;
    let (out, meta) = (Any(out), Any(meta));
    if meta.is_none() {
        return Ok((out, None));
    }
    let meta = meta.to::<Map<String, Any>>().map_err(|e| {
        Error::new("RuntimeError", &format!("the document's metadata did not read back as a Map with str keys: {}", e))
    })?;
    Ok((out, Some(meta)))
}
