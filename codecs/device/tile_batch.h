// What one launch of the device codec kernels works on: a batch of chunks of one codec, each cut
// into tiles (a thread block per tile), described by value so a launch captured in a CUDA graph
// replays exactly. Built on the host (codecs/device/tile_plan.h), read by the kernels and by the
// CPU emulation of the kernels in the tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec_spec.h"
#include "codecs/element/host_device.h"

namespace qccl {
// Inside the target namespace like everything the host compiler and nvcc both compile (the
// types differ per target, so no signature between translation units of two targets uses them).
inline namespace QCCL_ISA {
namespace tile {

// Chunks per launch: what fits a kernel's 4 KiB of parameters.
constexpr int kMaxBatchChunks = 24;
// Threads of a thread block.
constexpr uint32_t kTileThreads = 256;
// The largest tile the device kernels take (elements): lcm(block, +rht run) must not exceed it.
constexpr size_t kMaxTileElements = 8192;

// What the encodes of one chunk share with its decodes: its place and layout.
struct ChunkPlace {
  uint64_t count;        // elements encoded
  uint64_t paddedCount;  // count rounded up to whole +rht runs
  uint64_t blocks;       // block scales
  uint64_t scalesBytes;  // the scales section, padding included
  uint64_t elementsOffset;
  uint64_t elementsBytes;
  uint64_t firstTile;  // of this chunk's tiles, in the launch
  uint64_t tiles;      // at least 1: an empty chunk still has its header written
};

struct EncodeChunk {
  ChunkPlace place;
  const void* input;
  void* residual;  // error feedback; nullptr: none
  uint8_t* out;
  uint64_t offset;  // stochastic rounding: element i draws from stream index offset + i
  uint32_t call;
  uint32_t* amax;  // nvfp4: the chunk's largest |x| (zeroed before the amax pass), else nullptr
};

struct EncodeBatch {
  codec::CodecSpec spec;
  int inputType;  // qcclDataType_t
  int residualType;
  float residualDecay;  // p = x + (residualDecay * residual); 0: the residual is not read
  uint64_t seed;
  uint32_t rank;
  uint32_t tileElements;
  uint32_t chunkCount;
  EncodeChunk chunk[kMaxBatchChunks];
};

struct DecodeChunk {
  ChunkPlace place;
  const uint8_t* in;
  void* out;
  int sourceType;  // the dtype it was encoded from: the header must say so for format none
};

struct DecodeBatch {
  codec::CodecSpec spec;
  int outType;  // qcclDataType_t; fp32 when accumulating
  bool accumulate;
  uint32_t tileElements;
  uint32_t chunkCount;
  // The communicator's error word (device memory): decodes skip their writes once it is set, and
  // a chunk whose header does not match sets it; hostStatus (host memory the device can write,
  // or nullptr) receives the same code for the host to read without waiting.
  uint32_t* status;
  uint32_t* hostStatus;
  DecodeChunk chunk[kMaxBatchChunks];
};

// Status codes in the error word.
constexpr uint32_t kStatusChunkMismatch = 1;

// The chunk of the batch that tile `index` belongs to.
template <class Batch>
QCCL_HD uint32_t chunkOfTile(const Batch& batch, uint64_t index) {
  uint32_t c = 0;
  while (c + 1 < batch.chunkCount && batch.chunk[c + 1].place.firstTile <= index) ++c;
  return c;
}

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
