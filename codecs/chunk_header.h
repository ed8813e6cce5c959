// The 64-byte chunk header, serialised field by field in little-endian order so the byte layout
// documented in docs/CODECS.md holds whatever the host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qccl::codec {

constexpr uint32_t kChunkMagic = 0x4C434351u;  // bytes "QCCL"
constexpr uint8_t kChunkVersion = 1;
constexpr uint8_t kFlagStochastic = 0x1;
constexpr uint8_t kFlagCrc32c = 0x2;

struct ChunkHeader {
  uint8_t format = 0;
  uint8_t flags = 0;
  uint8_t sourceType = 0;  // qcclDataType_t of the encoded input
  uint32_t block = 0;
  uint16_t rhtSize = 0;
  uint64_t count = 0;
  float chunkScale = 1.0f;  // nvfp4: the encode scale s_enc; 1 otherwise
  uint32_t crc32c = 0;      // of the payload, when kFlagCrc32c is set
  uint64_t seed = 0;
  uint64_t payloadBytes = 0;  // scales and elements sections together
};

void writeChunkHeader(const ChunkHeader& header, uint8_t* out);

// Reads and checks what the header can check on its own (magic, version, reserved bytes,
// known format and dtype). Throws CodecError(InvalidUsage) naming the first mismatch.
ChunkHeader readChunkHeader(const uint8_t* in, size_t bytes);

}  // namespace qccl::codec
