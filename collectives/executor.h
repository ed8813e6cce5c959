// Where a call's computation runs and what memory it works on, after UCC's split of execution
// (ec) and memory (mc) components from the algorithms: the collectives encode, decode, convert
// and copy only through an Executor, so the same algorithm runs on host memory with the CPU
// kernels (host_executor.h) and on device memory with the CUDA kernels, in stream order
// (src/device/cuda_executor.h). Operations are issued in order; on a device executor they run
// asynchronously in that order, and fence() waits for them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec_spec.h"
#include "collectives/memory.h"
#include "qccl/qccl.h"

namespace qccl::coll {

struct Context;

// What every chunk of one call's encodes and decodes share.
struct CodecCall {
  codec::CodecSpec spec;
  uint64_t seed = 0;           // +rht signs, +sr key: the same on every rank
  uint32_t rank = 0;           // the encoding rank (keys its stochastic-rounding stream)
  float residualDecay = 1.0f;  // error feedback: p = x + (residualDecay * residual)
};

// One chunk to encode: count elements of input into the chunk at out (outBytes =
// codec::encodedSize), with error feedback when residual is set.
struct EncodeTask {
  const void* input;
  qcclDataType_t inputType;
  size_t count;
  void* residual;  // count elements of residualType, updated in place; nullptr: none
  qcclDataType_t residualType;
  uint32_t call;  // the stochastic-rounding stream: (seed, rank, call), element offset + i
  uint64_t offset;
  uint8_t* out;
  size_t outBytes;
};

// One received chunk to decode into out (outType), or to add into fp32 out (accumulate).
struct DecodeTask {
  const uint8_t* chunk;
  size_t bytes;
  size_t count;
  qcclDataType_t sourceType;  // what the chunk was encoded from (its layout, for format none)
  void* out;
  qcclDataType_t outType;
  bool accumulate;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // The memory this executor computes on; workspace and residuals of its calls come from here.
  virtual Allocator& allocator() = 0;
  MemoryKind memory() { return allocator().kind(); }

  // Buffers of this executor's memory (the caller's buffers included). copy may overlap.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  virtual void zero(void* dst, size_t bytes) = 0;
  // out = fp32(in); acc += fp32(in); values /= divisor; out = dtype(in), rounded to nearest even.
  // dtype: fp32, bf16 or fp16.
  virtual void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out) = 0;
  virtual void addToFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc) = 0;
  virtual void divide(float* values, size_t count, float divisor) = 0;
  virtual void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out) = 0;

  virtual void encode(const CodecCall& codec, const EncodeTask* tasks, size_t count) = 0;
  // Whether a received chunk may be decoded. Host memory: its header is checked here, and poison
  // or a mismatch is recorded in the context (false). Device memory cannot be read without
  // waiting, so the decode kernels check each header themselves and skip a chunk that does not
  // match (true here).
  virtual bool accept(Context& context, const uint8_t* chunk, size_t bytes, size_t count,
                      int from) = 0;
  virtual void decode(const CodecCall& codec, const DecodeTask* tasks, size_t count) = 0;

  // Waits until everything issued so far has completed.
  virtual void fence() = 0;
  // Synchronous copies between this executor's memory and host memory (error-feedback save and
  // load, staging).
  virtual void toHost(void* host, const void* src, size_t bytes) = 0;
  virtual void fromHost(void* dst, const void* host, size_t bytes) = 0;
};

}  // namespace qccl::coll
