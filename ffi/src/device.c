/*
 * device.c - Device text: parse ("cuda:1", "cpu") and print ("cuda:1", "cpu:0").
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const struct {
  int32_t type;
  const char *name;
} k_devices[] = {
    {FFK_DEVICE_CPU, "cpu"},
    {FFK_DEVICE_CUDA, "cuda"},
    {FFK_DEVICE_CUDA_HOST, "cuda_host"},
    {FFK_DEVICE_OPENCL, "opencl"},
    {FFK_DEVICE_VULKAN, "vulkan"},
    {FFK_DEVICE_METAL, "metal"},
    {FFK_DEVICE_VPI, "vpi"},
    {FFK_DEVICE_ROCM, "rocm"},
    {FFK_DEVICE_ROCM_HOST, "rocm_host"},
    {FFK_DEVICE_EXT_DEV, "ext_dev"},
    {FFK_DEVICE_CUDA_MANAGED, "cuda_managed"},
    {FFK_DEVICE_ONEAPI, "oneapi"},
    {FFK_DEVICE_WEBGPU, "webgpu"},
    {FFK_DEVICE_HEXAGON, "hexagon"},
    {FFK_DEVICE_MAIA, "maia"},
    {FFK_DEVICE_TRN, "trn"},
};
#define N_DEVICES (sizeof k_devices / sizeof k_devices[0])

const char *ffk_device_type_name(int32_t device_type) {
  for (size_t i = 0; i < N_DEVICES; ++i)
    if (k_devices[i].type == device_type) return k_devices[i].name;
  return NULL;
}

bool ffk_device_is_host(DLDevice d) {
  int32_t type = ffk_device_type(d);
  return type == FFK_DEVICE_CPU || type == FFK_DEVICE_CUDA_HOST;
}

int ffk_device_check_type(int64_t device_type) {
  if (device_type >= INT32_MIN && device_type <= INT32_MAX && ffk_device_type_name((int32_t)device_type) != NULL)
    return 0;
  return ffk_error_set(FFK_ERR_VALUE, "Unknown device: %lld", (long long)device_type);
}

int ffk_device_type_lookup(const char *name, size_t size, int32_t *out) {
  if (name == NULL) return ffk_error_set(FFK_ERR_VALUE, "ffk_device_type_lookup: name is NULL");
  for (size_t i = 0; i < N_DEVICES; ++i) {
    if (strlen(k_devices[i].name) == size && memcmp(k_devices[i].name, name, size) == 0) {
      *out = k_devices[i].type;
      return 1;
    }
  }
  return 0;
}

/* At most 200 bytes of `size` shown in a message. */
static int shown(size_t size) { return (int)(size > 200 ? 200 : size); }

int ffk_device_parse(const char *text, size_t size, DLDevice *out) {
  if (text == NULL) return ffk_error_set(FFK_ERR_VALUE, "Unknown device: text is NULL");
  const char *colon = memchr(text, ':', size);
  size_t name_len = colon ? (size_t)(colon - text) : size;
  int32_t type;
  int found = ffk_device_type_lookup(text, name_len, &type);
  if (found < 0) return -1;
  if (found == 0) return ffk_error_set(FFK_ERR_VALUE, "Unknown device: %.*s", shown(name_len), text);
  uint32_t index = 0;
  if (colon != NULL) {
    const char *digits = colon + 1;
    size_t len = size - name_len - 1;
    if (memchr(digits, ':', len) != NULL) return ffk_error_set(FFK_ERR_VALUE, "Invalid device: %.*s", shown(size), text);
    if (!ffk_parse__u32(digits, len, INT32_MAX, &index))
      return ffk_error_set(FFK_ERR_VALUE, "Invalid device index: %.*s", shown(len), digits);
  }
  *out = ffk_device(type, (int32_t)index);
  return 0;
}

size_t ffk_device_format(DLDevice d, char *buf, size_t cap) {
  const char *name = ffk_device_type_name(ffk_device_type(d));
  char tmp[FFK_DEVICE_STR_MAX + 32];
  int n = name ? snprintf(tmp, sizeof tmp, "%s:%d", name, (int)d.device_id)
               : snprintf(tmp, sizeof tmp, "device(type=%d):%d", (int)ffk_device_type(d), (int)d.device_id);
  if (cap > 0) snprintf(buf, cap, "%s", tmp);
  return (size_t)n;
}
