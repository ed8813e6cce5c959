#include "codecs/chunk_header.h"

#include <cstring>

#include "codecs/chunk_layout.h"
#include "codecs/codec_error.h"
#include "codecs/format.h"

namespace qccl::codec {

namespace {

template <class T>
T get(const uint8_t* in, size_t offset) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(in[offset + i]) << (8 * i);
  return T(v);
}

float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

ChunkHeader readChunkHeader(const uint8_t* in, size_t bytes) {
  if (bytes < kChunkHeaderBytes) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: %zu bytes is shorter than the %zu-byte header",
                    bytes, kChunkHeaderBytes);
  }
  if (get<uint32_t>(in, 0) != kChunkMagic) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: bad magic 0x%08x (not a qccl chunk)",
                    get<uint32_t>(in, 0));
  }
  if (in[4] != kChunkVersion) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: version %u, this library reads version %u",
                    unsigned(in[4]), unsigned(kChunkVersion));
  }
  bool reservedZero = in[15] == 0;
  for (size_t i = 52; i < kChunkHeaderBytes; ++i) reservedZero = reservedZero && in[i] == 0;
  if (!reservedZero) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: reserved header bytes are not zero");
  }
  ChunkHeader h;
  h.format = in[5];
  h.flags = in[6];
  h.sourceType = in[7];
  h.block = get<uint32_t>(in, 8);
  h.rhtSize = get<uint16_t>(in, 12);
  h.count = get<uint64_t>(in, 16);
  h.chunkScale = bitsToFloat(get<uint32_t>(in, 24));
  h.crc32c = get<uint32_t>(in, 28);
  h.seed = get<uint64_t>(in, 32);
  h.payloadBytes = get<uint64_t>(in, 40);
  h.valueFormat = in[14];
  h.densityPpm = get<uint32_t>(in, 48);
  if (h.format >= kFormatCount) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: unknown format id %u", unsigned(h.format));
  }
  // Bytes 14 and 48-51 are topk's value format and density, reserved on every other format.
  if (h.format != uint8_t(Format::TopK) && (h.valueFormat != 0 || h.densityPpm != 0)) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: reserved header bytes are not zero");
  }
  if (h.format == uint8_t(Format::TopK) &&
      (h.valueFormat == uint8_t(Format::None) || h.valueFormat >= uint8_t(Format::TopK))) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: topk value format id %u is not a dense format",
                    unsigned(h.valueFormat));
  }
  if ((h.flags & ~(kFlagStochastic | kFlagCrc32c)) != 0) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: unknown flags 0x%02x", unsigned(h.flags));
  }
  if (!isCodecDataType(h.sourceType)) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: unknown source dtype %u",
                    unsigned(h.sourceType));
  }
  return h;
}

}  // namespace qccl::codec
