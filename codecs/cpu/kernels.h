// The CPU kernel interface: one table of entry points per instruction-set target, compiled from
// the same source (kernels_impl.h) with different flags and chosen at run time (dispatch.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codecs/codec_spec.h"
#include "qccl/qccl.h"

namespace qccl::codec {

struct EncodeJob {
  CodecSpec spec;
  const void* input;
  qcclDataType_t inputType;
  size_t count;
  size_t paddedCount;  // count rounded up to whole +rht runs
  uint8_t* scales;
  uint8_t* elements;
  uint64_t seed;
  uint32_t rank;
  uint32_t call;
  uint64_t offset;
  void* residual;  // error feedback, count elements, or nullptr
  qcclDataType_t residualType;
  float residualDecay;  // p = x + (residualDecay * residual); 0: the residual is not read
  float* scratch;       // kernelScratchFloats(spec) floats
};

struct DecodeJob {
  CodecSpec spec;
  qcclDataType_t sourceType;  // the encoder's input dtype (the element type of format none)
  const uint8_t* scales;
  const uint8_t* elements;
  size_t count;
  size_t paddedCount;
  float chunkScale;
  uint64_t seed;
  void* output;
  qcclDataType_t outputType;
  bool accumulate;  // output is fp32 and receives output += decoded
  float* scratch;
};

struct KernelTable {
  const char* name;
  float (*encode)(const EncodeJob& job);  // returns the chunk scale for the header
  void (*decode)(const DecodeJob& job);
  uint32_t (*crc32c)(uint32_t crc, const uint8_t* data, size_t size);
};

// Kernels work tile by tile; a tile holds whole blocks and whole +rht runs.
size_t tileElements(const CodecSpec& spec);
size_t kernelScratchFloats(const CodecSpec& spec);

// The best table for this CPU, or the one QCCL_CPU_KERNELS names (portable, avx2, avx512).
const KernelTable& cpuKernels();
// Every table this CPU can run, portable first.
std::vector<const KernelTable*> runnableCpuKernels();

}  // namespace qccl::codec
