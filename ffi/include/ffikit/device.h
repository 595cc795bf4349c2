/*
 * ffikit/device.h - Device (DLPack's DLDevice): parse and print.
 *
 * Text forms: a device name optionally followed by ":index" ("cpu", "cuda:1",
 * "rocm:0"). Printing always includes the index ("cpu:0"). Names: cpu cuda cuda_host
 * cuda_managed opencl vulkan metal vpi rocm rocm_host ext_dev oneapi webgpu hexagon
 * maia trn.
 */
#ifndef FFIKIT_DEVICE_H
#define FFIKIT_DEVICE_H

#include <dlpack/dlpack.h>
#include <string.h>

#include <ffikit/base.h>

FFK_EXTERN_C_BEGIN

/* DLDeviceType values, DLPack 1.1 (Debian's 0.6 header stops at kDLCUDAManaged). */
enum {
  FFK_DEVICE_CPU = 1,
  FFK_DEVICE_CUDA = 2,
  FFK_DEVICE_CUDA_HOST = 3,
  FFK_DEVICE_OPENCL = 4,
  FFK_DEVICE_VULKAN = 7,
  FFK_DEVICE_METAL = 8,
  FFK_DEVICE_VPI = 9,
  FFK_DEVICE_ROCM = 10,
  FFK_DEVICE_ROCM_HOST = 11,
  FFK_DEVICE_EXT_DEV = 12,
  FFK_DEVICE_CUDA_MANAGED = 13,
  FFK_DEVICE_ONEAPI = 14,
  FFK_DEVICE_WEBGPU = 15,
  FFK_DEVICE_HEXAGON = 16,
  FFK_DEVICE_MAIA = 17,
  FFK_DEVICE_TRN = 18,
};

/* Room for the longest text ffk_device_format writes, NUL included. */
#define FFK_DEVICE_STR_MAX 48

/*
 * Builds a DLDevice. Cannot fail. Debian's dlpack.h (0.6) declares DLDeviceType with
 * enumerators up to 13 only; in C++ an enum object holding a newer type (hexagon = 16,
 * ...) must not be read as the enum, so these helpers move the field as an int32_t.
 */
static inline DLDevice ffk_device(int32_t type, int32_t id) {
  DLDevice d;
  memcpy(&d.device_type, &type, sizeof type);
  d.device_id = id;
  return d;
}

/* The device type of `d` as an integer (an FFK_DEVICE_* value). */
static inline int32_t ffk_device_type(DLDevice d) {
  int32_t type;
  memcpy(&type, &d.device_type, sizeof type);
  return type;
}

/*
 * Parses `size` bytes of text ("cuda:1", "cpu"; no index means 0). Returns 0, or -1
 * with a ValueError in tvm_ffi's words: `Unknown device: gpu` for an unknown name,
 * `Invalid device: cuda:1:2` for a second colon, `Invalid device index: x` for an index
 * that is not 0 to 2^31-1 in decimal digits, `Unknown device: text is NULL`.
 */
FFK_API int ffk_device_parse(const char *text, size_t size, DLDevice *out);

/*
 * Writes "name:index" into buf (NUL-terminated, truncated to cap) and returns its
 * length. An unknown type prints as "device(type=T):index". Cannot fail.
 */
FFK_API size_t ffk_device_format(DLDevice d, char *buf, size_t cap);

/* The name of a device type ("cuda"), or NULL when unknown. Borrowed, static. */
FFK_API const char *ffk_device_type_name(int32_t device_type);

/*
 * Whether `device_type` names a known device type (one ffk_device_type_name names): the
 * rule for a device type given as a number (Python's Device(2, 0)). It is an int64, so a
 * binding passes the integer it has without narrowing it first. 0, or -1 with a
 * ValueError in tvm_ffi's words, as ffk_device_parse's: "Unknown device: 99".
 */
FFK_API int ffk_device_check_type(int64_t device_type);

/*
 * Finds a device type by name ("cuda_host"). Returns 1 and sets *out when known, 0
 * when not (no error set), -1 with a ValueError when name is NULL.
 */
FFK_API int ffk_device_type_lookup(const char *name, size_t size, int32_t *out);

/*
 * True for the devices whose memory the CPU addresses directly: cpu, and cuda_host (CUDA's
 * pinned host memory). What decides where a copy runs, whether an element is read in
 * place, and whether a binding may hand the memory to the host (Python's buffer protocol,
 * Rust's as_slice); the messages around it are the callers'. Cannot fail.
 */
FFK_API bool ffk_device_is_host(DLDevice d);

/* True when both name the same device. */
static inline bool ffk_device_equal(DLDevice a, DLDevice b) {
  return ffk_device_type(a) == ffk_device_type(b) && a.device_id == b.device_id;
}

FFK_EXTERN_C_END

#endif /* FFIKIT_DEVICE_H */
