// A build without CUDA: device buffers cannot be served.
#include "src/common/error.h"
#include "src/device/device_codec.h"
#include "src/device/device_executor.h"

namespace qccl::device {

std::unique_ptr<DeviceExecutor> makeDeviceExecutor(int device) {
  throwError(qcclInvalidUsage,
             "a buffer is in GPU %d's memory, but this qccl was built without CUDA "
             "(QCCL_WITH_CUDA, docs/BUILD.md)",
             device);
}

int currentDevice() {
  throwError(qcclInvalidUsage, "a CUDA stream was given, but this qccl was built without CUDA");
}

void encodeOnDevice(const codec::CodecSpec&, const void*, size_t, qcclDataType_t, void*, size_t,
                    const codec::EncodeParams&, cudaStream_t) {
  throwError(qcclInvalidUsage, "a buffer is in GPU memory, but this qccl was built without CUDA");
}

void decodeOnDevice(const codec::CodecSpec&, const void*, size_t, void*, size_t, qcclDataType_t,
                    bool, cudaStream_t) {
  throwError(qcclInvalidUsage, "a buffer is in GPU memory, but this qccl was built without CUDA");
}

CurrentDevice::CurrentDevice(int) {}
CurrentDevice::~CurrentDevice() {}

}  // namespace qccl::device
