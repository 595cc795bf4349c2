// Tests of ffikit/device.h: parsing and printing Device text, device type names.
#include <ffikit/device.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/ffk_test.h"

namespace {

using ffk::test::FetchError;

class Device : public ffk::test::Test {};

// DLDeviceType in Debian's dlpack.h (0.6) has enumerators up to 13, so in C++ its range is
// 0..15: converting 16 (hexagon) or 99 to it is undefined behaviour and UBSan's enum check
// flags loads of such values. The tests therefore build and read devices through memcpy.
DLDevice Dev(int32_t type, int32_t id) {
  DLDevice d;
  static_assert(sizeof d.device_type == sizeof type, "DLDeviceType is 32 bits");
  std::memcpy(&d.device_type, &type, sizeof type);
  d.device_id = id;
  return d;
}

int32_t TypeOf(const DLDevice& d) {
  int32_t type;
  std::memcpy(&type, &d.device_type, sizeof type);
  return type;
}

#define EXPECT_DEVICE(d, type, id)    \
  do {                                \
    EXPECT_EQ(TypeOf(d), (type));     \
    EXPECT_EQ((d).device_id, (id));   \
  } while (0)

std::string Format(DLDevice d) {
  char buf[128];
  std::memset(buf, 'Z', sizeof buf);
  size_t n = ffk_device_format(d, buf, sizeof buf);
  EXPECT_EQ(std::strlen(buf), n) << "returned length differs from the text written";
  return std::string(buf, std::strlen(buf));
}

struct Named {
  const char* name;
  int32_t type;
};

const std::vector<Named>& AllNames() {
  static const std::vector<Named> names = {
      {"cpu", FFK_DEVICE_CPU},         {"cuda", FFK_DEVICE_CUDA},
      {"cuda_host", FFK_DEVICE_CUDA_HOST}, {"cuda_managed", FFK_DEVICE_CUDA_MANAGED},
      {"opencl", FFK_DEVICE_OPENCL},   {"vulkan", FFK_DEVICE_VULKAN},
      {"metal", FFK_DEVICE_METAL},     {"vpi", FFK_DEVICE_VPI},
      {"rocm", FFK_DEVICE_ROCM},       {"rocm_host", FFK_DEVICE_ROCM_HOST},
      {"ext_dev", FFK_DEVICE_EXT_DEV}, {"oneapi", FFK_DEVICE_ONEAPI},
      {"webgpu", FFK_DEVICE_WEBGPU},   {"hexagon", FFK_DEVICE_HEXAGON},
      {"maia", FFK_DEVICE_MAIA},       {"trn", FFK_DEVICE_TRN},
  };
  return names;
}

TEST_F(Device, TypeValuesMatchDlpack) {
  EXPECT_EQ(FFK_DEVICE_CPU, kDLCPU);
  EXPECT_EQ(FFK_DEVICE_CUDA, kDLCUDA);
  EXPECT_EQ(FFK_DEVICE_CUDA_HOST, kDLCUDAHost);
  EXPECT_EQ(FFK_DEVICE_ROCM, kDLROCM);
  EXPECT_EQ(FFK_DEVICE_CUDA_MANAGED, kDLCUDAManaged);
}

TEST_F(Device, CheckTypeKnowsTheTableAndNamesAnUnknownCode) {
  for (int64_t t : {1, 2, 3, 13, 18}) EXPECT_EQ(ffk_device_check_type(t), 0) << t;
  EXPECT_EQ(ffk_device_check_type(99), -1);
  EXPECT_EQ(FetchError(), "ValueError: Unknown device: 99");
  EXPECT_EQ(ffk_device_check_type(0), -1);
  EXPECT_EQ(FetchError(), "ValueError: Unknown device: 0");
  EXPECT_EQ(ffk_device_check_type(-1), -1);
  EXPECT_EQ(FetchError(), "ValueError: Unknown device: -1");
  EXPECT_EQ(ffk_device_check_type(INT64_C(1) << 32 | 2), -1) << "not narrowed to cuda";
  EXPECT_EQ(FetchError(), "ValueError: Unknown device: 4294967298");
}

TEST_F(Device, HostMeansTheCpuAndPinnedHostMemory) {
  EXPECT_TRUE(ffk_device_is_host(ffk_device(FFK_DEVICE_CPU, 0)));
  EXPECT_TRUE(ffk_device_is_host(ffk_device(FFK_DEVICE_CUDA_HOST, 3)));
  for (int32_t t : {int32_t{FFK_DEVICE_CUDA}, int32_t{FFK_DEVICE_CUDA_MANAGED}, int32_t{FFK_DEVICE_ROCM},
                    int32_t{FFK_DEVICE_ROCM_HOST}, int32_t{0}, int32_t{99}})
    EXPECT_FALSE(ffk_device_is_host(ffk_device(t, 0))) << t;
}

TEST_F(Device, ParsesNameWithIndex) {
  DLDevice d = Dev(0, -7);
  ASSERT_EQ(ffk_device_parse("cuda:1", 6, &d), 0) << FetchError();
  EXPECT_DEVICE(d, FFK_DEVICE_CUDA, 1);
  EXPECT_EQ(Format(d), "cuda:1");
}

TEST_F(Device, NameWithoutIndexMeansIndexZero) {
  DLDevice d = Dev(0, -7);
  ASSERT_EQ(ffk_device_parse("cpu", 3, &d), 0) << FetchError();
  EXPECT_DEVICE(d, FFK_DEVICE_CPU, 0);
  EXPECT_EQ(Format(d), "cpu:0");
}

TEST_F(Device, EveryNameRoundTripsWithAndWithoutIndex) {
  for (const Named& n : AllNames()) {
    SCOPED_TRACE(n.name);
    DLDevice d = Dev(0, -7);
    ASSERT_EQ(ffk_device_parse(n.name, std::strlen(n.name), &d), 0) << FetchError();
    EXPECT_DEVICE(d, n.type, 0);
    EXPECT_EQ(Format(d), std::string(n.name) + ":0");

    std::string text = std::string(n.name) + ":3";
    ASSERT_EQ(ffk_device_parse(text.data(), text.size(), &d), 0) << FetchError();
    EXPECT_DEVICE(d, n.type, 3);
    EXPECT_EQ(Format(d), text);
  }
}

TEST_F(Device, LargestIndexParses) {
  DLDevice d;
  ASSERT_EQ(ffk_device_parse("rocm:2147483647", 15, &d), 0) << FetchError();
  EXPECT_DEVICE(d, FFK_DEVICE_ROCM, 2147483647);
  EXPECT_EQ(Format(d), "rocm:2147483647");
}

TEST_F(Device, UnknownNameFailsWithDocumentedMessage) {
  DLDevice d;
  EXPECT_EQ(ffk_device_parse("gpu", 3, &d), -1);
  EXPECT_EQ(FetchError(), "ValueError: Unknown device: gpu");
}

TEST_F(Device, UnknownNamesFailWithValueErrorNamingThem) {
  for (const char* text : {"", "gpu:0", "CUDA", "cud", "cudax", " cpu", "cpu ", ":0", "cuda_"}) {
    SCOPED_TRACE(text);
    DLDevice d;
    EXPECT_EQ(ffk_device_parse(text, std::strlen(text), &d), -1);
    std::string err = FetchError();
    EXPECT_EQ(err.rfind("ValueError: ", 0), 0u) << err;
    std::string name(text, std::strcspn(text, ":"));
    EXPECT_EQ(err, "ValueError: Unknown device: " + name);
  }
}

TEST_F(Device, BadIndexFailsWithDocumentedMessage) {
  for (const char* text : {"cuda:", "cuda:x", "cuda:-1", "cuda:99999999999", "cuda:2147483648",
                           "cuda:1x", "cuda:1.0", "cpu: 1", "cuda:1 "}) {
    SCOPED_TRACE(text);
    DLDevice d;
    EXPECT_EQ(ffk_device_parse(text, std::strlen(text), &d), -1);
    EXPECT_EQ(FetchError(), std::string("ValueError: Invalid device index: ") + (std::strchr(text, ':') + 1));
  }
  DLDevice d;  // a second colon: the whole text is named, as tvm_ffi names it
  EXPECT_EQ(ffk_device_parse("cuda:1:2", 8, &d), -1);
  EXPECT_EQ(FetchError(), "ValueError: Invalid device: cuda:1:2");
}

TEST_F(Device, NullTextFailsWithValueError) {
  DLDevice d;
  EXPECT_EQ(ffk_device_parse(nullptr, 0, &d), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
  EXPECT_EQ(ffk_device_parse(nullptr, 6, &d), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

TEST_F(Device, ParseReadsOnlySizeBytes) {
  DLDevice d;
  ASSERT_EQ(ffk_device_parse("cuda:12junk", 7, &d), 0) << FetchError();
  EXPECT_DEVICE(d, FFK_DEVICE_CUDA, 12);

  ASSERT_EQ(ffk_device_parse("cuda_host:1", 4, &d), 0) << FetchError();
  EXPECT_DEVICE(d, FFK_DEVICE_CUDA, 0);

  // A buffer with no NUL after the text.
  const char exact[6] = {'r', 'o', 'c', 'm', ':', '5'};
  char* heap = new char[sizeof exact];
  std::memcpy(heap, exact, sizeof exact);
  ASSERT_EQ(ffk_device_parse(heap, sizeof exact, &d), 0) << FetchError();
  EXPECT_DEVICE(d, FFK_DEVICE_ROCM, 5);
  delete[] heap;
}

TEST_F(Device, TypeNameOfEveryKnownType) {
  for (const Named& n : AllNames()) {
    const char* name = ffk_device_type_name(n.type);
    ASSERT_NE(name, nullptr) << n.name;
    EXPECT_STREQ(name, n.name);
  }
}

TEST_F(Device, TypeNameOfUnknownTypeIsNull) {
  for (int32_t type : {0, 5, 6, 19, 99, -1, 1000000}) {
    EXPECT_EQ(ffk_device_type_name(type), nullptr) << type;
  }
  EXPECT_FALSE(ffk_error_occurred());
}

TEST_F(Device, TypeLookupFindsEveryName) {
  for (const Named& n : AllNames()) {
    int32_t type = -12345;
    EXPECT_EQ(ffk_device_type_lookup(n.name, std::strlen(n.name), &type), 1) << n.name;
    EXPECT_EQ(type, n.type) << n.name;
  }
}

TEST_F(Device, TypeLookupUsesSize) {
  int32_t type = -12345;
  EXPECT_EQ(ffk_device_type_lookup("cuda_host", 4, &type), 1);
  EXPECT_EQ(type, FFK_DEVICE_CUDA);
  EXPECT_EQ(ffk_device_type_lookup("cudaXYZ", 4, &type), 1);
  EXPECT_EQ(type, FFK_DEVICE_CUDA);
}

TEST_F(Device, TypeLookupOfUnknownNameReturnsZeroWithoutError) {
  for (const char* name : {"gpu", "", "cuda:0", "CPU", "cud"}) {
    int32_t type = -12345;
    EXPECT_EQ(ffk_device_type_lookup(name, std::strlen(name), &type), 0) << name;
    EXPECT_FALSE(ffk_error_occurred()) << name << ": " << FetchError();
  }
}

TEST_F(Device, TypeLookupOfNullFailsWithValueError) {
  int32_t type = -12345;
  EXPECT_EQ(ffk_device_type_lookup(nullptr, 3, &type), -1);
  EXPECT_TRUE(ffk_error_matches("ValueError"));
  ffk_error_clear();
}

TEST_F(Device, UnknownTypeFormatsAsDeviceCall) {
  EXPECT_EQ(Format(Dev(99, 3)), "device(type=99):3");
  EXPECT_EQ(Format(Dev(0, 0)), "device(type=0):0");
  EXPECT_EQ(Format(Dev(5, 1)), "device(type=5):1");
}

TEST_F(Device, FormatTruncatesToCapAndReturnsFullLength) {
  DLDevice d = Dev(FFK_DEVICE_CUDA_HOST, 12);  // "cuda_host:12", 12 chars
  char buf[32];
  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_device_format(d, buf, 5), 12u);
  EXPECT_STREQ(buf, "cuda");
  EXPECT_EQ(buf[5], 'Z') << "wrote past cap";

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_device_format(d, buf, 1), 12u);
  EXPECT_EQ(buf[0], '\0');
  EXPECT_EQ(buf[1], 'Z');

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_device_format(d, buf, 0), 12u);
  EXPECT_EQ(buf[0], 'Z') << "cap 0 must write nothing";

  std::memset(buf, 'Z', sizeof buf);
  EXPECT_EQ(ffk_device_format(d, buf, 13), 12u);
  EXPECT_STREQ(buf, "cuda_host:12");
  EXPECT_EQ(buf[13], 'Z');
}

TEST_F(Device, StrMaxHoldsEveryNamedDeviceWithLargestIndex) {
  for (const Named& n : AllNames()) {
    char buf[FFK_DEVICE_STR_MAX];
    size_t len = ffk_device_format(Dev(n.type, 2147483647), buf, sizeof buf);
    EXPECT_LT(len, sizeof buf) << n.name;
    EXPECT_EQ(std::string(buf), std::string(n.name) + ":2147483647");
  }
}

// The header says FFK_DEVICE_STR_MAX is room for the longest text ffk_device_format
// writes; the widest unknown form has both fields at their widest.
TEST_F(Device, StrMaxHoldsTheWidestUnknownForm) {
  DLDevice d = Dev(INT32_MIN, INT32_MIN);
  char buf[FFK_DEVICE_STR_MAX];
  size_t len = ffk_device_format(d, buf, sizeof buf);
  EXPECT_LT(len, sizeof buf) << "full text would be " << Format(d);
}

TEST_F(Device, EqualComparesTypeAndIndex) {
  EXPECT_TRUE(ffk_device_equal(ffk_device(2, 1), ffk_device(2, 1)));
  EXPECT_FALSE(ffk_device_equal(ffk_device(2, 1), ffk_device(2, 0)));
  EXPECT_FALSE(ffk_device_equal(ffk_device(2, 1), ffk_device(1, 1)));
}

}  // namespace
