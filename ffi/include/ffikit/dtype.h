/*
 * ffikit/dtype.h - DataType (DLPack's DLDataType): parse and print.
 *
 * Text forms: int8 int16 int32 int64, uint8 ... uint64, float16 float32 float64,
 * bfloat16, complex64 complex128, bool, handle, the float8/6/4 family (float8_e4m3fn,
 * float8_e5m2, ...), and a lane suffix for vectors: "float32x4". TVM-FFI's short
 * spellings parse too (i8 u16 f32 bf16 fp8_e4m3fn f8_e5m2 fp6_/f6_ fp4_/f4_, and
 * "float4_e2m1fn_x2" / "fp4_e2m1fn_x2" / "f4_e2m1fn_x2") and print in the canonical form.
 * numpy's type strings ("<f4") map to DataTypes through ffk_dtype_from_numpy. Debian's dlpack.h
 * (0.6) predates the newer type codes, so they are defined here with DLPack 1.1's
 * values.
 */
#ifndef FFIKIT_DTYPE_H
#define FFIKIT_DTYPE_H

#include <dlpack/dlpack.h>

#include <ffikit/base.h>

FFK_EXTERN_C_BEGIN

/* DLDataTypeCode values, DLPack 1.1 (codes 0..5 match kDLInt..kDLComplex). */
enum {
  FFK_DTYPE_INT = 0,
  FFK_DTYPE_UINT = 1,
  FFK_DTYPE_FLOAT = 2,
  FFK_DTYPE_HANDLE = 3,
  FFK_DTYPE_BFLOAT = 4,
  FFK_DTYPE_COMPLEX = 5,
  FFK_DTYPE_BOOL = 6,
  FFK_DTYPE_FLOAT8_E3M4 = 7,
  FFK_DTYPE_FLOAT8_E4M3 = 8,
  FFK_DTYPE_FLOAT8_E4M3B11FNUZ = 9,
  FFK_DTYPE_FLOAT8_E4M3FN = 10,
  FFK_DTYPE_FLOAT8_E4M3FNUZ = 11,
  FFK_DTYPE_FLOAT8_E5M2 = 12,
  FFK_DTYPE_FLOAT8_E5M2FNUZ = 13,
  FFK_DTYPE_FLOAT8_E8M0FNU = 14,
  FFK_DTYPE_FLOAT6_E2M3FN = 15,
  FFK_DTYPE_FLOAT6_E3M2FN = 16,
  FFK_DTYPE_FLOAT4_E2M1FN = 17,
};

/* Room for the longest text ffk_dtype_format writes, NUL included. */
#define FFK_DTYPE_STR_MAX 48

/* Builds a DLDataType. Cannot fail (validity is checked where it is used). */
static inline DLDataType ffk_dtype(uint8_t code, uint8_t bits, uint16_t lanes) {
  DLDataType t;
  t.code = code;
  t.bits = bits;
  t.lanes = lanes;
  return t;
}

/*
 * Parses `size` bytes of text ("float32", "int8x4", "bool"). Returns 0, or -1 with a
 * ValueError quoting the text (`Invalid dtype "flaot32"`) or when text is NULL.
 */
FFK_API int ffk_dtype_parse(const char *text, size_t size, DLDataType *out);

/*
 * The DataType of a numpy dtype, given its type string (`dtype.str`: a byte-order
 * character '<' '>' '|' '=', a kind character and the item size, e.g. "<f4", "|b1") of
 * `size` bytes, and its name (`dtype.name`, NUL-terminated, may be NULL), which is read
 * only when the kind and size are not one of numpy's own types (extension types such as
 * ml_dtypes' bfloat16 "<V2", float8_e5m2 "<f1", int4 "<V1"). Borrowed arguments.
 * Returns 0, or -1 with a ValueError naming the dtype: a byte order other than this
 * machine's (never a silent reinterpretation), a kind with no DLPack type (text, objects,
 * datetimes), an item size the kind does not have, or malformed text.
 */
FFK_API int ffk_dtype_from_numpy(const char *typestr, size_t size, const char *name, DLDataType *out);

/*
 * Writes the canonical text of `t` ("float32", "int8x4") into buf (NUL-terminated,
 * FFK_DTYPE_STR_MAX bytes suffice) and returns its length. A type with no name prints
 * as "dtype(code=C, bits=B, lanes=L)", truncated to cap. Cannot fail; cap 0 writes nothing.
 */
FFK_API size_t ffk_dtype_format(DLDataType t, char *buf, size_t cap);

/* True when both have the same code, bits and lanes. */
static inline bool ffk_dtype_equal(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* Bytes per element (bits * lanes rounded up to bytes; float4 packs two per byte -> 1). */
static inline size_t ffk_dtype_itemsize(DLDataType t) {
  return ((size_t)t.bits * t.lanes + 7) / 8;
}

FFK_EXTERN_C_END

#endif /* FFIKIT_DTYPE_H */
