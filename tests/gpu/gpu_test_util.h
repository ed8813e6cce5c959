// What the GPU tests share: the skip when no GPU is present (CI never has one), device buffers,
// CUDA checks.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace qccl::test {

inline std::string noGpuReason() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) return cudaGetErrorString(status);
  return devices == 0 ? "no CUDA device" : "";
}

#define QCCL_SKIP_WITHOUT_GPU()                          \
  do {                                                   \
    const std::string why = ::qccl::test::noGpuReason(); \
    if (!why.empty()) GTEST_SKIP() << "no GPU: " << why; \
  } while (0)

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(call)

// Bytes in device memory, freed with the object.
class DeviceBytes {
 public:
  explicit DeviceBytes(size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&data_, bytes ? bytes : 1) != cudaSuccess) data_ = nullptr;
  }
  explicit DeviceBytes(const std::vector<uint8_t>& host) : DeviceBytes(host.size()) { put(host); }
  ~DeviceBytes() { cudaFree(data_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  size_t size() const { return bytes_; }
  void put(const std::vector<uint8_t>& host) {
    cudaMemcpy(data_, host.data(), host.size(), cudaMemcpyHostToDevice);
  }
  std::vector<uint8_t> get() const {
    std::vector<uint8_t> host(bytes_);
    cudaDeviceSynchronize();
    cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

}  // namespace qccl::test
