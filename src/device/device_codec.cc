#include "src/device/device_codec.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "codecs/codec_error.h"
#include "codecs/cuda/codec_kernels.h"
#include "src/device/device_executor.h"

namespace qccl::device {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    codec::throwCodecError(codec::ErrorKind::CudaFailure, "cuda: %s: %s", what,
                           cudaGetErrorString(status));
  }
}

// Per GPU and stream: nvfp4's amax word and an error word, made at the first call (the codec
// API allocates nothing after that). Their values do not carry from call to call: each nvfp4
// encode resets its amax word, and the error word stays zero, the header having been checked on
// the host.
struct Scratch {
  uint32_t* amax = nullptr;
  uint32_t* status = nullptr;
};

Scratch& scratchFor(cudaStream_t stream) {
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Scratch> all;
  std::lock_guard<std::mutex> lock(mutex);
  Scratch& s = all[{currentDevice(), stream}];
  if (s.amax == nullptr) {
    check(cudaMalloc(&s.amax, sizeof(uint32_t)), "cudaMalloc");
    check(cudaMalloc(&s.status, sizeof(uint32_t)), "cudaMalloc");
    check(cudaMemset(s.status, 0, sizeof(uint32_t)), "cudaMemset");
  }
  return s;
}

}  // namespace

void encodeOnDevice(const codec::CodecSpec& spec, const void* input, size_t count,
                    qcclDataType_t dtype, void* output, size_t outputBytes,
                    const codec::EncodeParams& params, cudaStream_t stream) {
  codec::requireDeviceKernels(spec);
  codec::checkEncode(spec, input, count, dtype, output, outputBytes, params);
  if (params.crc32c) {
    codec::throwCodecError(codec::ErrorKind::InvalidUsage,
                           "codec: a CRC32C is computed on host memory only");
  }
  const cuda::EncodeRequest request{input, params.residual, static_cast<uint8_t*>(output),
                                    count, params.offset,   params.call};
  cuda::encode({spec, params.seed, params.rank, stream}, dtype, params.residualType,
               params.residualDecay, &request, 1, scratchFor(stream).amax);
}

void decodeOnDevice(const codec::CodecSpec& spec, const void* input, size_t inputBytes,
                    void* output, size_t count, qcclDataType_t dtype, bool accumulate,
                    cudaStream_t stream) {
  codec::requireDeviceKernels(spec);
  uint8_t header[codec::kChunkHeaderBytes] = {};
  if (input != nullptr && inputBytes >= sizeof header) {
    check(cudaMemcpyAsync(header, input, sizeof header, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  const codec::ChunkHeader h = codec::checkDecode(spec, header, input, inputBytes, output, count,
                                                  dtype, accumulate, nullptr);
  const cuda::DecodeRequest request{static_cast<const uint8_t*>(input), output, count,
                                    qcclDataType_t(h.sourceType)};
  cuda::decode({spec, h.seed, 0, stream}, dtype, accumulate, &request, 1, scratchFor(stream).status,
               nullptr);
}

}  // namespace qccl::device
