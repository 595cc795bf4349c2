/*
 * ffikit/schema.h - type schemas: the declared types of a typed Function's parameters.
 *
 * A schema is parsed from text such as "int", "Array<int>", "Map<str, Array<float>>" or
 * "Optional<Device>", and checks a value against that type, converting it the way the
 * ffk_any accessors do where the conversion is the one a user expects:
 *
 *   int       an int, or a bool as 0/1
 *   float     a float, or an int or bool converted
 *   bool      a bool, or an int (non-zero is true)
 *   str       a str (inline, String object or raw C string view)
 *   bytes     a bytes value (inline, Bytes object or byte-array view)
 *   Device    a Device, or a str such as "cuda:1"
 *   dtype     a data type, or a str such as "float32"
 *   ptr       an opaque pointer, or None
 *   None      None only
 *   Any       anything, unchanged
 *   Object    any object
 *   Optional<T>   None, or what T accepts
 *   Array<T>, Tuple, List<T>, Map<K, V>, Dict<K, V>   the containers: the element types
 *             are checked (and converted) by a slot the containers library registers
 *             (ffk_type_set_converter); without the slot only the container type is checked
 *   a type name or key ("Function", "Tensor", "mylib.Point")   an instance of that type
 *
 * Schemas are immutable once parsed and may be shared between threads freely.
 */
#ifndef FFIKIT_SCHEMA_H
#define FFIKIT_SCHEMA_H

#include <ffikit/any.h>

FFK_EXTERN_C_BEGIN

/* Schema kinds that are not type indices. */
#define FFK_SCHEMA_ANY (-1)      /* anything, passed unchanged */
#define FFK_SCHEMA_OPTIONAL (-2) /* None, or params[0] */

/* The most type parameters a schema takes (Map<K, V>). */
#define FFK_SCHEMA_MAX_PARAMS 2

typedef struct ffk_schema ffk_schema;

/*
 * One node of a parsed schema. `type_index` is FFK_SCHEMA_ANY, FFK_SCHEMA_OPTIONAL or a
 * type index (FFK_TYPE_INT, FFK_TYPE_ARRAY, a registered type...); `params` are the type
 * parameters (Array<T> has one, Map<K, V> two; a container without parameters accepts
 * any elements); `text` is the canonical spelling used in messages ("Map<str, int>").
 */
struct ffk_schema {
  int32_t type_index;
  int32_t nparams;
  const ffk_schema *params[FFK_SCHEMA_MAX_PARAMS];
  const char *text;
};

/*
 * Parses one type from `text` (the whole string, surrounding spaces allowed). Returns a
 * new schema, owned by the caller and freed with ffk_schema_free, or NULL with a
 * ValueError naming the text and the offset of the problem ("unknown type `flaot`",
 * "`Map` takes 2 type parameters but got 1") or a MemoryError.
 */
FFK_API ffk_schema *ffk_schema_parse(const char *text);

/* Frees a schema from ffk_schema_parse. NULL is a no-op. */
FFK_API void ffk_schema_free(ffk_schema *schema);

/*
 * Whether a field declared with type text `declared` accepts the values of a field whose
 * type text is `given` (both borrowed; any spelling ffk_schema_parse reads, so spaces and
 * "DataType" / "dtype" or "ffikit.Tensor" / "Tensor" do not matter). This is the check a
 * binding makes when a class annotates a field that C defines (Python's c_class): the
 * annotation is `declared`, C's field type is `given`. The rules, applied to nested types
 * recursively:
 *   Any           accepts everything;
 *   Optional<T>   accepts Optional<U> when T accepts U (not a plain U: the annotation
 *                 would claim a None the field never holds);
 *   Object        accepts any object type other than str and bytes, and Optional of one;
 *   Array<T>      accepts Array, List or Tuple whose elements T accepts (a container
 *                 without parameters has Any elements; Array without them accepts any);
 *   Map<K, V>     likewise Map or Dict;
 *   List, Dict, Tuple   their own kind only, elements as above;
 *   an object type   itself and its subtypes; any other type: itself only.
 * Returns 1 (accepts), 0 (does not), or -1 with the ValueError of ffk_schema_parse naming
 * the text that does not parse ("bad type `flaot`: unknown type `flaot` at offset 0") or
 * a MemoryError. Sets no error for 0 or 1.
 */
FFK_API int ffk_schema_accepts(const char *declared, const char *given);

/*
 * Checks `value` (borrowed) against `schema`. Returns
 *    0  when the value already has the type: *out is untouched and `value` may be used as is;
 *    1  when it was converted: *out holds a new owned value of the type (an int from a bool,
 *       a Device from "cuda:1", an Array<int> from a List of ints...);
 *   -1  with *out None and an error: a TypeError whose message reads
 *       "expected `Array<int>` but got `List` (item #1: expected `int` but got `str`)",
 *       a ValueError from a malformed string ("cuda:x" for a Device), or a MemoryError.
 * Only the 1 and -1 returns write *out (without releasing what it held); a caller may keep
 * a value there across a call that returns 0.
 */
FFK_API int ffk_schema_convert(const ffk_schema *schema, const ffk_any *value, ffk_any *out);

/*
 * A converter slot: what ffk_schema_convert calls for a value whose schema names the
 * object type the slot is registered for (and its subtypes). It follows the contract of
 * ffk_schema_convert and may call it for elements. The slot sees every value, not just
 * instances of its type, so it decides what it accepts (an Array<int> accepts a List).
 */
typedef int (*ffk_convert_fn)(const ffk_schema *schema, const ffk_any *value, ffk_any *out);

/*
 * Sets the converter slot of an object type (NULL restores the default: an instance
 * check, and type parameters are not checked). Returns 0, or -1 with a ValueError for an
 * unknown or non-object type index.
 */
FFK_API int ffk_type_set_converter(int32_t type_index, ffk_convert_fn convert);

FFK_EXTERN_C_END

#endif /* FFIKIT_SCHEMA_H */
