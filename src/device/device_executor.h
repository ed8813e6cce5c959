// The executor of device buffers (collectives/executor.h): the CUDA codec kernels on the call's
// stream, the communicator's device workspace, and its error word, which the decode kernels
// raise when a received chunk does not match (the communicator's asynchronous error, read
// without waiting through host memory the device writes). Made by makeDeviceExecutor, which
// fails in a build without CUDA.
#pragma once

#include <memory>

#include "collectives/executor.h"
#include "qccl/qccl.h"

namespace qccl::device {

class DeviceExecutor : public coll::Executor {
 public:
  // The GPU this executor works on.
  virtual int device() const = 0;
  // The stream the next operations are issued on (the call's; NULL: the legacy default stream).
  virtual void setStream(cudaStream_t stream) = 0;
  // True while the stream is being captured into a CUDA graph.
  virtual bool capturing() = 0;
  // Page-locked host memory (staging of device buffers through the host transports).
  virtual coll::Allocator& pinnedAllocator() = 0;
  // The error the device has raised (0: none), read without waiting.
  virtual uint32_t asyncError() const = 0;
};

// Throws Error: qcclInvalidUsage in a build without CUDA, qcclUnhandledCudaError when CUDA fails.
std::unique_ptr<DeviceExecutor> makeDeviceExecutor(int device);
// The calling thread's current GPU (throws like makeDeviceExecutor).
int currentDevice();

// Makes `device` current for the calling thread until the guard goes (no-op without CUDA).
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  [[maybe_unused]] int previous_ = -1;  // unused without CUDA
};

}  // namespace qccl::device
