// The 64-byte chunk header, serialised field by field in little-endian order so the byte layout
// documented in docs/CODECS.md holds whatever the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/element/host_device.h"

namespace qccl::codec {

constexpr size_t kChunkHeaderBytes = 64;
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
  uint8_t valueFormat = 0;    // topk: the kept values' format; 0 otherwise
  uint32_t densityPpm = 0;    // topk: the fraction kept, in parts per million; 0 otherwise
};

// Byte by byte, little-endian: the same code writes headers on the host and in the device
// encode kernels (codecs/device/encode_tile.h).
QCCL_HD void putLittleEndian(uint8_t* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = uint8_t(value >> (8 * i));
}

QCCL_HD void writeChunkHeader(const ChunkHeader& h, uint8_t* out) {
  for (size_t i = 0; i < kChunkHeaderBytes; ++i) out[i] = 0;
  putLittleEndian(out + 0, kChunkMagic, 4);
  putLittleEndian(out + 4, kChunkVersion, 1);
  putLittleEndian(out + 5, h.format, 1);
  putLittleEndian(out + 6, h.flags, 1);
  putLittleEndian(out + 7, h.sourceType, 1);
  putLittleEndian(out + 8, h.block, 4);
  putLittleEndian(out + 12, h.rhtSize, 2);
  putLittleEndian(out + 14, h.valueFormat, 1);
  putLittleEndian(out + 16, h.count, 8);
  putLittleEndian(out + 24, floatBits(h.chunkScale), 4);
  putLittleEndian(out + 28, h.crc32c, 4);
  putLittleEndian(out + 32, h.seed, 8);
  putLittleEndian(out + 40, h.payloadBytes, 8);
  putLittleEndian(out + 48, h.densityPpm, 4);
}

// Reads and checks what the header can check on its own (magic, version, reserved bytes, known
// format and dtype, topk fields zero on other formats). Throws CodecError(InvalidUsage) naming the
// first mismatch.
ChunkHeader readChunkHeader(const uint8_t* in, size_t bytes);

}  // namespace qccl::codec
