// The device decode of one tile of a received chunk, in phases (cta.h), with the arithmetic of
// the CPU kernels (codecs/cpu/kernels_impl.h, decodeWith) one element at a time:
//   check     thread 0 reads the chunk's header: a chunk that is not what the call expects (other
//             codec, count or layout, a CRC32C the device does not verify, bad magic) is not
//             decoded and raises the communicator's error word; nor is anything decoded once the
//             word holds an error
//   values    per octet the codes times their block's factor; without +rht, into the output
//   stage h   +rht: the inverse butterflies
//   output    +rht: x * 1/sqrt(R), signs flipped back, into the output
// The output is written in its dtype (rounded to nearest even) or added into fp32.
#pragma once

#include "codecs/chunk_header.h"
#include "codecs/device/encode_tile.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

QCCL_HD uint64_t getLittleEndian(const uint8_t* in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(in[i]) << (8 * i);
  return v;
}

// Whether the 64-byte header at `h` is one the decode of `c` may trust: the checks of the host's
// validation (codecs/codec.cc) that the device can make, and no CRC32C (the device does not
// compute them). The chunk scale is returned for nvfp4.
QCCL_HD bool headerMatches(const uint8_t* h, const DecodeBatch& b, const DecodeChunk& c,
                           float* chunkScale, uint64_t* seed) {
  bool ok = getLittleEndian(h, 4) == kChunkMagic && h[4] == kChunkVersion;
  ok = ok && h[5] == uint8_t(b.spec.format) && (h[6] & ~kFlagStochastic) == 0;
  const int source = h[7];
  ok = ok && (source == qcclFloat32 || source == qcclBfloat16 || source == qcclFloat16);
  ok = ok && (b.spec.format != codec::Format::None || source == c.sourceType);
  ok = ok && getLittleEndian(h + 8, 4) == b.spec.block &&
       getLittleEndian(h + 12, 2) == b.spec.rhtSize && h[14] == 0 && h[15] == 0;
  ok = ok && getLittleEndian(h + 16, 8) == c.place.count;
  ok = ok && getLittleEndian(h + 40, 8) ==
                 c.place.elementsOffset + c.place.elementsBytes - kChunkHeaderBytes;
  for (int i = 48; i < int(kChunkHeaderBytes); ++i) ok = ok && h[i] == 0;
  const float scale = bitsFloat(uint32_t(getLittleEndian(h + 24, 4)));
  ok = ok && (b.spec.format == codec::Format::NvFp4 ? (scale > 0.0f && scale <= rules::kFloatMax)
                                                    : scale == 1.0f);
  *chunkScale = scale;
  *seed = getLittleEndian(h + 32, 8);
  return ok;
}

QCCL_HD void storeValue(const DecodeBatch& b, const DecodeChunk& c, uint64_t g, float v) {
  if (b.outType == qcclFloat32) {
    float* out = static_cast<float*>(c.out) + g;
    *out = b.accumulate ? *out + v : v;
  } else if (b.outType == qcclBfloat16) {
    static_cast<uint16_t*>(c.out)[g] = uint16_t(encodeRne<Bf16>(v));
  } else {
    static_cast<uint16_t*>(c.out)[g] = uint16_t(encodeRne<Fp16>(v));
  }
}

template <class Q>
struct DecodeTile {
  // Shared memory: the tile's values, then the check's verdict, chunk scale and seed.
  QCCL_HD static size_t sharedFloats(const DecodeBatch& b) { return b.tileElements + 4; }
  QCCL_HD static int phases(const DecodeBatch& b) {
    return 2 + (b.spec.rhtSize ? log2Of(b.spec.rhtSize) + 1 : 0);
  }

  QCCL_HD static void run(int phase, const DecodeBatch& b, const Cta& cta) {
    const DecodeChunk& c = b.chunk[chunkOfTile(b, cta.block)];
    const uint64_t start = (cta.block - c.place.firstTile) * b.tileElements;
    const uint64_t left = start < c.place.paddedCount ? c.place.paddedCount - start : 0;
    const uint32_t n = uint32_t(left < b.tileElements ? left : b.tileElements);
    float* x = cta.shared;
    uint32_t* verdict = reinterpret_cast<uint32_t*>(cta.shared + b.tileElements);
    if (phase == 0) {
      if (cta.thread == 0) check(b, c, verdict);
      return;
    }
    if (verdict[0] == 0) return;
    ChunkScale chunk;
    chunk.encodeScale = bitsFloat(verdict[1]);
    chunk.decodeScale = 1.0f / chunk.encodeScale;
    const uint32_t r = b.spec.rhtSize;
    if (phase == 1) return values(b, c, cta, start, n, chunk, x);
    const int stages = log2Of(r);
    if (phase - 1 <= stages) {
      for (uint32_t q = cta.thread; q < n / 2; q += cta.threads) {
        butterfly(x, q, r, 1u << (phase - 2));
      }
      return;
    }
    const float norm = rhtNorm(int(r));
    const RhtSigns signs = rhtSigns(uint64_t(verdict[2]) | uint64_t(verdict[3]) << 32);
    for (uint32_t i = cta.thread; i < n; i += cta.threads) {
      if (start + i < c.place.count)
        storeValue(b, c, start + i, flipSign(x[i] * norm, signs, i % r));
    }
  }

  QCCL_HD static void check(const DecodeBatch& b, const DecodeChunk& c, uint32_t* verdict) {
    float scale = 1.0f;
    uint64_t seed = 0;
    const bool ok = *b.status == 0 && headerMatches(c.in, b, c, &scale, &seed);
    if (!ok && *b.status == 0) {
      raiseStatus(b.status, kStatusChunkMismatch);
      if (b.hostStatus) *static_cast<volatile uint32_t*>(b.hostStatus) = kStatusChunkMismatch;
    }
    verdict[0] = ok ? 1u : 0u;
    verdict[1] = floatBits(scale);
    verdict[2] = uint32_t(seed);
    verdict[3] = uint32_t(seed >> 32);
  }

  QCCL_HD static void values(const DecodeBatch& b, const DecodeChunk& c, const Cta& cta,
                             uint64_t start, uint32_t n, const ChunkScale& chunk, float* x) {
    const uint32_t block = b.spec.block ? b.spec.block : (n ? n : 1);
    const uint8_t* scales = c.in + kChunkHeaderBytes;
    const uint8_t* elements = c.in + c.place.elementsOffset;
    for (uint32_t o = cta.thread; o < (n + 7) / 8; o += cta.threads) {
      const uint32_t first = 8 * o, m = n - first < 8 ? n - first : 8;
      const float factor =
          Q::kScaleBytes ? Q::decodeFactor(scales + (start + first) / block * Q::kScaleBytes, chunk)
                         : 1.0f;
      const uint8_t* in = elements + (start + first) * Q::kElementBits / 8;
      for (uint32_t j = 0; j < m; ++j) {
        const float v = Q::value(unpack(in, j), factor);
        if (b.spec.rhtSize) {
          x[first + j] = v;
        } else if (start + first + j < c.place.count) {
          storeValue(b, c, start + first + j, v);
        }
      }
    }
  }

  // Code j of the octet whose packed codes start at in.
  QCCL_HD static uint32_t unpack(const uint8_t* in, uint32_t j) {
    if constexpr (Q::kElementBits >= 8) {
      return uint32_t(getLittleEndian(in + j * (Q::kElementBits / 8), int(Q::kElementBits / 8)));
    } else {
      const uint32_t bit = j * Q::kElementBits;  // sub-byte codes fill bytes from the low bits up
      return (in[bit / 8] >> (bit % 8)) & ((1u << Q::kElementBits) - 1);
    }
  }
};

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
