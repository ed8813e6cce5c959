// The device codec kernels (codecs/device/ run as CUDA kernels), for the CUDA executor: every
// call enqueues its work on `stream` and returns; nothing waits on the host and nothing is
// allocated, so a CUDA graph can capture the calls. Plain C++, callable from code the host
// compiler builds. Launch failures throw codec::CodecError(CudaFailure).
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec_spec.h"
#include "qccl/qccl.h"

namespace qccl::cuda {

// What the encodes or decodes of one launch share.
struct CodecLaunch {
  codec::CodecSpec spec;
  uint64_t seed;
  uint32_t rank;
  cudaStream_t stream;
};

struct EncodeRequest {
  const void* input;  // device memory, count elements of the launch's input dtype
  void* residual;     // error feedback, updated in place; nullptr: none
  uint8_t* out;       // codec::encodedSize bytes
  size_t count;
  uint64_t offset;  // stochastic rounding: the chunk's first element in its stream
  uint32_t call;
};

struct DecodeRequest {
  const uint8_t* in;
  void* out;  // count elements of the launch's output dtype
  size_t count;
  qcclDataType_t sourceType;  // the dtype the chunk was encoded from
};

// amaxWords: device memory of `count` words (nvfp4's per-chunk pass; untouched otherwise).
// residualDecay: p = x + (residualDecay * residual), as codec::EncodeParams.
void encode(const CodecLaunch& launch, qcclDataType_t inputType, qcclDataType_t residualType,
            float residualDecay, const EncodeRequest* requests, size_t count, uint32_t* amaxWords);
// status: the communicator's error word (device memory), hostStatus its copy in mapped host
// memory (or nullptr): a chunk that does not match raises both and is not decoded, and nothing
// is decoded while the word holds an error.
void decode(const CodecLaunch& launch, qcclDataType_t outType, bool accumulate,
            const DecodeRequest* requests, size_t count, uint32_t* status, uint32_t* hostStatus);

void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out, cudaStream_t s);
void addToFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc, cudaStream_t s);
void divide(float* values, size_t count, float divisor, cudaStream_t s);
void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out, cudaStream_t s);

}  // namespace qccl::cuda
