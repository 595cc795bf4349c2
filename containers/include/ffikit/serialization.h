/*
 * ffikit/serialization.h - values to and from JSON text that survives a process and a
 * language: TVM-FFI's JSON graph format, so a document written by one reads in the
 * other for the types both know.
 *
 * A document is one JSON object (written compactly, keys in this order):
 *
 *     {"root_index": 4, "nodes": [node, ...], "metadata": {...}}
 *
 * "metadata" is present only when given. Each distinct value is one node, written once
 * and referred to by its index in "nodes"; children come before their parents (the
 * writer numbers nodes in post-order), so "root_index" is the last node. "Distinct"
 * is key semantics (ffk_any_equal), as in tvm_ffi: equal ints, strings, bytes share a
 * node, floats when their bits are equal (0.0 and -0.0 are two nodes, so -0.0 survives);
 * objects share one when they are the same object (sharing survives a round trip: two
 * fields holding one Array read back holding one Array). The nodes:
 *
 *     None                        {"type": "None"}
 *     bool, int, float            {"type": "bool", "data": true}  "int" 42  "float" 1.5
 *     dtype                       {"type": "DataType", "data": "float32"}
 *     Device                      {"type": "Device", "data": [2, 1]}     (device type, id)
 *     str                         {"type": "ffi.String", "data": "..."}
 *     bytes                       {"type": "ffi.Bytes", "data": "<base64>"}
 *     Shape                       {"type": "ffi.Shape", "data": [2, 3]}
 *     Array, List                 {"type": "ffi.Array" / "ffi.List", "data": [i, j, ...]}
 *     Map, Dict                   {"type": "ffi.Map" / "ffi.Dict", "data": [k0, v0, k1, v1...]}
 *     Tuple (ffikit's own)        {"type": "ffikit.Tuple", "data": [i, j, ...]}
 *     a reflected object          {"type": "<type key>", "data": {"<field>": ...}}
 *
 * (indices are node indices). In an object's data, a field stored as int, float or bool
 * (ffikit/reflect.h's storage) and a field of type dtype are written inline as JSON
 * values; every other field is a node index. Every field is written, compare-off and
 * repr-off ones included. A type with a FFK_ATTR_DATA_TO_JSON hook writes what its hook
 * returns as "data" (a JSON-able value: None, bool, int, float, str, Array/List/Tuple,
 * Map/Dict with str keys) and is read back by its FFK_ATTR_DATA_FROM_JSON hook.
 *
 * Floats are written in the shortest form that reads back to the same double (tvm_ffi
 * writes %.17g: 0.10000000000000001 where ffikit writes 0.1; both read either); NaN and
 * infinities as the bare tokens NaN, Infinity, -Infinity (as tvm_ffi does), which the
 * reader accepts. Strings are escaped as tvm_ffi escapes them (\" \\ \/ \b \f \n \r \t,
 * \u00XX in lower case for other control characters and DEL, other UTF-8 as is), so for
 * the same value the two write the same bytes, floats aside; Map/Dict entries are written
 * in ffikit's iteration order (insertion order), which tvm_ffi's large Maps do not keep.
 */
#ifndef FFIKIT_SERIALIZATION_H
#define FFIKIT_SERIALIZATION_H

#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/*
 * Writes `value` (borrowed) as a JSON graph document in *out (a new str). `metadata`
 * (borrowed, may be NULL or None for none) is a Map or Dict with str keys whose values are
 * JSON-able (see above); it is written as plain JSON under "metadata".
 * Returns 0, or -1 with *out None and:
 *   TypeError   a value that cannot be written: a tensor, a Function, a Module, an
 *               opaque or foreign object, an object of a reflected type that reflection
 *               did not make (ffk_object_is_reflection_made) and that has no
 *               FFK_ATTR_DATA_TO_JSON hook ("cannot serialize `ffikit.Tensor`"); a
 *               metadata that is not a Map or Dict with str keys of JSON-able values;
 *   ValueError  a cycle ("Cycle detected during serialization: a List contains itself",
 *               "... a Dict contains itself", "... a `mylib.Node` object reaches itself
 *               through its fields"); a str that is not valid UTF-8;
 *   RuntimeError nesting deeper than FFK_STRUCTURAL_MAX_DEPTH (ffikit/structural.h);
 *   a MemoryError, or what a FFK_ATTR_DATA_TO_JSON hook raised (a TypeError when what it
 *   returned is not JSON-able, or when the attribute is not a Function).
 * Never changes the value. Lists and Dicts are read through snapshots, as structural.h's walks do.
 */
FFK_API int ffk_to_json_graph(const ffk_any *value, const ffk_any *metadata, ffk_any *out);

/*
 * Reads the JSON graph document `text` (`len` bytes, UTF-8, need not be NUL-terminated)
 * into *out (a new reference). When `metadata` is not NULL it receives the document's
 * "metadata" as a Map (JSON objects become Maps with str keys, arrays become Arrays), or
 * None when absent. The text is untrusted: any document that is not valid JSON of the
 * format above is an error, never a crash, a hang or a leak. Nodes may be referred to
 * from several places (sharing is rebuilt) but a node reachable from itself is refused.
 * Returns 0, or -1 with *out (and *metadata) None and:
 *   ValueError  "Invalid JSON Object Graph: ..." naming the problem: not JSON (with the
 *               parser's message and byte offset), a missing or mistyped "root_index",
 *               "nodes", "type" or "data", a node index out of range, a node reachable from
 *               itself, an odd Map/Dict data length, a bad dtype string, Device pair or
 *               base64 text, an unknown type key, an unknown field name, a missing field
 *               without a default, a field value that does not convert to the field's
 *               type (the conversion's message);
 *   TypeError   an object type that cannot be read: neither reflected nor with a
 *               FFK_ATTR_DATA_FROM_JSON hook ("cannot deserialize `ffikit.Function`: ...");
 *               a hook attribute that is not a Function, or a hook that returned something
 *               other than an object of its type. (A reflected type without the hook is
 *               rebuilt by reflection: nothing in a type says its library allocates its
 *               objects, so such a library should give its type the hook);
 *   RuntimeError nesting deeper than FFK_STRUCTURAL_MAX_DEPTH;
 *   a MemoryError, or what a FFK_ATTR_DATA_FROM_JSON hook raised.
 * Objects are rebuilt with ffk_object_new_reflected and ffk_field_init (their constructor
 * is not called: a document restores state, as pickle does); fields absent from the
 * data take their defaults. Container and string type keys are read under both names,
 * "ffi.Array" and "ffikit.Array", "ffi.String" and "ffikit.String", and so on.
 */
FFK_API int ffk_from_json_graph(const char *text, size_t len, ffk_any *out, ffk_any *metadata);

FFK_EXTERN_C_END

#endif /* FFIKIT_SERIALIZATION_H */
