// Shared by the cross-backend tests (tests/backends/*_conformance_test.cpp): the backends under
// test, device buffers and descriptors owned for one case, and the fixture that opens a handle
// on the backend's device (skipping when the device is absent).
#pragma once

#include "tensor_fill.hpp"
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <memory>
#include <string>
#include <vector>

namespace tessera::testing {

namespace ref = tessera::reference;

struct backend_under_test {
  std::string name;
  tsrDeviceKind_t kind;
};

inline std::vector<backend_under_test> loaded_backends() {
  std::vector<backend_under_test> out;
  for (const tsrPluginInfo_t& p : tessera::plugins())
    if (p.loaded) out.push_back({p.name, p.device_kind});
  return out;
}

inline std::string backend_param_name(const ::testing::TestParamInfo<backend_under_test>& info) {
  return info.param.name;
}

// Device buffer owned for one case.
struct device_buffer {
  tsrHandle_t h = nullptr;
  void* p = nullptr;
  device_buffer(tsrHandle_t handle, size_t bytes) : h(handle) {
    if (tsrMalloc(h, bytes ? bytes : 1, &p) != TSR_STATUS_SUCCESS) p = nullptr;
  }
  ~device_buffer() { tsrFree(h, p); }
  void upload(const ref::host_tensor& t) {
    std::vector<uint8_t> bytes = t.pack();
    tsrMemcpyHostToDevice(h, p, bytes.data(), bytes.size());
  }
  void download(ref::host_tensor& t) {
    std::vector<uint8_t> bytes(t.byte_size());
    tsrMemcpyDeviceToHost(h, bytes.data(), p, bytes.size());
    t.unpack(bytes.data());
  }
};

inline tsrTensorDescriptor_t make_desc(const tsrpTensor& t) {
  tsrTensorDescriptor_t d = nullptr;
  tsrCreateTensorDescriptor(&d);
  tsrSetTensorNdDescriptor(d, static_cast<tsrDataType_t>(t.data_type), t.ndims, t.dims, t.strides);
  return d;
}

struct desc_owner {
  tsrTensorDescriptor_t d;
  explicit desc_owner(const tsrpTensor& t) : d(make_desc(t)) {}
  ~desc_owner() { tsrDestroyTensorDescriptor(d); }
  operator tsrTensorDescriptor_t() const { return d; }
};

inline std::vector<tsrKernelInfo_t> kernels_of(const std::string& backend, tsrOperation_t op) {
  std::vector<tsrKernelInfo_t> out;
  for (const tsrKernelInfo_t& k : tessera::kernels(op))
    if (backend == k.backend_name) out.push_back(k);
  return out;
}

// Per kernel: cases run, cases declined (with one example reason).
struct tally {
  int ran = 0;
  int declined = 0;
  std::string example_reason;
};

// Derive one fixture per test file: `class PoolingConformance : public BackendTest {};`.
class BackendTest : public ::testing::TestWithParam<backend_under_test> {
 protected:
  void SetUp() override {
    int n = 0;
    ASSERT_OK(tsrGetDeviceCount(GetParam().kind, &n));
    if (n == 0) GTEST_SKIP() << "no device for backend " << GetParam().name;
    ASSERT_OK(tsrCreate(GetParam().kind, 0, &h_));
  }
  void TearDown() override { tsrDestroy(h_); }
  tsrHandle_t h_ = nullptr;
};

}  // namespace tessera::testing
