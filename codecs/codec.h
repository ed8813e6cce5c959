// The codec library's entry points: sizes, encode and decode of one chunk on host memory.
// Everything here validates its arguments and throws CodecError; nothing is written to the
// caller's output before validation has passed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/chunk_header.h"
#include "codecs/chunk_layout.h"
#include "codecs/codec_spec.h"
#include "codecs/cpu/kernels.h"
#include "qccl/qccl.h"

namespace qccl::codec {

struct EncodeParams {
  uint64_t seed = 0;
  uint32_t rank = 0;
  uint32_t call = 0;
  uint64_t offset = 0;
  void* residual = nullptr;  // error feedback
  qcclDataType_t residualType = qcclFloat32;
  float residualDecay = 1.0f;  // p = x + (residualDecay * residual); 0: the residual is not read
  bool crc32c = false;
};

size_t encodedSize(const CodecSpec& spec, size_t count, qcclDataType_t dtype);

// An error-feedback decay is a number in [0, 1] (NaN is not).
inline bool validResidualDecay(float decay) { return decay >= 0.0f && decay <= 1.0f; }

// Throws CodecError(InvalidUsage) for a codec the CUDA kernels do not implement: topk, whose
// selection runs on the host only.
void requireDeviceKernels(const CodecSpec& spec);

// The checks encode makes before writing anything (throws CodecError); the chunk's layout.
ChunkLayout checkEncode(const CodecSpec& spec, const void* input, size_t count,
                        qcclDataType_t dtype, const void* output, size_t outputBytes,
                        const EncodeParams& params);

// kernels: the CPU target to run on (tests compare targets); by default the best one.
void encode(const CodecSpec& spec, const void* input, size_t count, qcclDataType_t dtype,
            void* output, size_t outputBytes, const EncodeParams& params,
            const KernelTable& kernels = cpuKernels());

// Checks a chunk's header against what decode(spec, ..., count, ...) expects, without decoding;
// throws CodecError(InvalidUsage) naming the mismatch.
void validateChunk(const CodecSpec& spec, const void* input, size_t inputBytes, size_t count);

// The checks decode makes before writing anything, on the chunk's 64-byte header (a host copy
// for a chunk in device memory) and, for its CRC32C, its payload (nullptr where it cannot be read:
// a chunk with a CRC32C is then refused). Returns the header.
ChunkHeader checkDecode(const CodecSpec& spec, const uint8_t* header, const void* input,
                        size_t inputBytes, const void* output, size_t count, qcclDataType_t dtype,
                        bool accumulate, const uint8_t* payload,
                        const KernelTable& kernels = cpuKernels());

// accumulate: dtype must be qcclFloat32 and output receives output += decoded.
void decode(const CodecSpec& spec, const void* input, size_t inputBytes, void* output, size_t count,
            qcclDataType_t dtype, bool accumulate, const KernelTable& kernels = cpuKernels());

}  // namespace qccl::codec
