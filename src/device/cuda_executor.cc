// The CUDA device executor: everything enqueued on the call's stream; fence() and the host copies
// are the only waits.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "codecs/cuda/codec_kernels.h"
#include "src/common/error.h"
#include "src/device/device_executor.h"

namespace qccl::device {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throwError(qcclUnhandledCudaError, "cuda: %s: %s", what, cudaGetErrorString(status));
  }
}

class CudaExecutor;

// Calls fn(first, group) for each group of tasks that `same` puts together, in order of first
// appearance.
template <class Task, class Same, class Fn>
void forEachGroup(const Task* tasks, size_t count, Same same, Fn fn) {
  std::vector<bool> done(count, false);
  for (size_t first = 0; first < count; ++first) {
    if (done[first]) continue;
    std::vector<const Task*> group;
    for (size_t t = first; t < count; ++t) {
      if (!done[t] && same(tasks[first], tasks[t])) {
        group.push_back(&tasks[t]);
        done[t] = true;
      }
    }
    fn(tasks[first], group);
  }
}

// Device memory for workspace and residuals. Refused during a graph capture: a captured call
// must find its memory allocated by an earlier call of the same shape.
class DeviceAllocator : public coll::Allocator {
 public:
  explicit DeviceAllocator(CudaExecutor& owner) : owner_(owner) {}
  coll::MemoryKind kind() const override { return coll::MemoryKind::Device; }
  void* allocate(size_t bytes) override;
  void release(void* memory) noexcept override { cudaFree(memory); }

 private:
  CudaExecutor& owner_;
};

class PinnedAllocator : public coll::Allocator {
 public:
  coll::MemoryKind kind() const override { return coll::MemoryKind::Host; }
  void* allocate(size_t bytes) override {
    void* memory = nullptr;
    check(cudaHostAlloc(&memory, bytes, cudaHostAllocPortable), "cudaHostAlloc");
    return memory;
  }
  void release(void* memory) noexcept override { cudaFreeHost(memory); }
};

class CudaExecutor : public DeviceExecutor {
 public:
  explicit CudaExecutor(int device) : device_(device) {
    CurrentDevice current(device);
    check(cudaMalloc(&status_, sizeof(uint32_t)), "cudaMalloc");
    check(cudaMemset(status_, 0, sizeof(uint32_t)), "cudaMemset");
    check(cudaHostAlloc(reinterpret_cast<void**>(&hostStatus_), sizeof(uint32_t),
                        cudaHostAllocMapped | cudaHostAllocPortable),
          "cudaHostAlloc");
    *hostStatus_ = 0;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&hostStatusOnDevice_), hostStatus_, 0),
          "cudaHostGetDevicePointer");
  }
  ~CudaExecutor() override {
    cudaFree(status_);
    cudaFreeHost(hostStatus_);
  }

  int device() const override { return device_; }
  void setStream(cudaStream_t stream) override { stream_ = stream; }
  bool capturing() override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream_, &status), "cudaStreamIsCapturing");
    return status != cudaStreamCaptureStatusNone;
  }
  coll::Allocator& pinnedAllocator() override { return pinned_; }
  uint32_t asyncError() const override { return *static_cast<volatile uint32_t*>(hostStatus_); }

  coll::Allocator& allocator() override { return allocator_; }

  void copy(void* dst, const void* src, size_t bytes) override {
    if (bytes && dst != src) {
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync");
    }
  }
  void zero(void* dst, size_t bytes) override {
    if (bytes) check(cudaMemsetAsync(dst, 0, bytes, stream_), "cudaMemsetAsync");
  }
  void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out) override {
    cuda::toFloat32(in, dtype, count, out, stream_);
  }
  void addToFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc) override {
    cuda::addToFloat32(in, dtype, count, acc, stream_);
  }
  void divide(float* values, size_t count, float divisor) override {
    cuda::divide(values, count, divisor, stream_);
  }
  void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out) override {
    cuda::fromFloat32(in, count, dtype, out, stream_);
  }

  // One launch per (input, residual) dtype pair; a collective's batches have one.
  void encode(const coll::CodecCall& codec, const coll::EncodeTask* tasks, size_t count) override {
    forEachGroup(
        tasks, count,
        [](const coll::EncodeTask& a, const coll::EncodeTask& b) {
          return a.inputType == b.inputType && a.residualType == b.residualType;
        },
        [&](const coll::EncodeTask& like, const std::vector<const coll::EncodeTask*>& group) {
          std::vector<cuda::EncodeRequest> requests;
          for (const coll::EncodeTask* t : group) {
            requests.push_back({t->input, t->residual, t->out, t->count, t->offset, t->call});
          }
          amax_.resize(requests.size() * sizeof(uint32_t));
          cuda::encode(launch(codec), like.inputType, like.residualType, codec.residualDecay,
                       requests.data(), requests.size(), reinterpret_cast<uint32_t*>(amax_.data()));
        });
  }

  bool accept(coll::Context&, const uint8_t*, size_t, size_t, int) override { return true; }

  // One launch per (output dtype, accumulate) pair.
  void decode(const coll::CodecCall& codec, const coll::DecodeTask* tasks, size_t count) override {
    forEachGroup(
        tasks, count,
        [](const coll::DecodeTask& a, const coll::DecodeTask& b) {
          return a.outType == b.outType && a.accumulate == b.accumulate;
        },
        [&](const coll::DecodeTask& like, const std::vector<const coll::DecodeTask*>& group) {
          std::vector<cuda::DecodeRequest> requests;
          for (const coll::DecodeTask* t : group) {
            requests.push_back({t->chunk, t->out, t->count, t->sourceType});
          }
          cuda::decode(launch(codec), like.outType, like.accumulate, requests.data(),
                       requests.size(), status_, hostStatusOnDevice_);
        });
  }

  void fence() override { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  void toHost(void* host, const void* src, size_t bytes) override {
    copy(host, src, bytes);
    fence();
  }
  void fromHost(void* dst, const void* host, size_t bytes) override {
    copy(dst, host, bytes);
    fence();
  }

 private:
  cuda::CodecLaunch launch(const coll::CodecCall& codec) const {
    return {codec.spec, codec.seed, codec.rank, stream_};
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  DeviceAllocator allocator_{*this};
  PinnedAllocator pinned_;
  uint32_t* status_ = nullptr;
  uint32_t* hostStatus_ = nullptr;
  uint32_t* hostStatusOnDevice_ = nullptr;
  coll::Buffer amax_{allocator_};  // nvfp4's per-chunk words
};

void* DeviceAllocator::allocate(size_t bytes) {
  if (owner_.capturing()) {
    throwError(qcclInvalidUsage,
               "qccl must allocate %zu bytes of device workspace, which a CUDA graph capture "
               "does not allow: run the call once before capturing it",
               bytes);
  }
  void* memory = nullptr;
  check(cudaMalloc(&memory, bytes), "cudaMalloc");
  return memory;
}

}  // namespace

std::unique_ptr<DeviceExecutor> makeDeviceExecutor(int device) {
  return std::make_unique<CudaExecutor>(device);
}

int currentDevice() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

CurrentDevice::CurrentDevice(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
}

CurrentDevice::~CurrentDevice() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace qccl::device
