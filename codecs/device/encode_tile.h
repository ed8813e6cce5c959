// The device encode of one tile (a thread block's share of a chunk), in phases (cta.h), with the
// arithmetic of the CPU kernels (codecs/cpu/kernels_impl.h) one element at a time, so that the
// bytes, the residuals and the stochastic-rounding draws are the CPU's:
//   load      x = input (+ residual), zeros past the input; +rht: signs flipped, p = x kept for EF
//   stage h   +rht: the butterflies a+b, a-b of pairs h apart, h = 1, 2, ..., R/2
//   norm      +rht: x *= 1/sqrt(R)
//   reduce    per octet (8 consecutive elements) the largest |x|; sign1: the eight lane sums
//   scales    per block the scale bytes and factors; the first tile writes the header and zeroes
//             the padding
//   codes     per octet the codes, packed; EF without +rht updates the residual here, with +rht
//             it keeps the decoded values in x
//   stage h   EF with +rht: the inverse butterflies
//   residual  EF with +rht: x * 1/sqrt(R), signs flipped back, residual = p - x where finite
// nvfp4 needs the chunk's largest |x| before any block scale: AmaxTile runs the first phases over
// the whole chunk beforehand and leaves it in the chunk's amax word.
#pragma once

#include "codecs/chunk_header.h"
#include "codecs/device/cta.h"
#include "codecs/device/tile_batch.h"
#include "codecs/device/tile_formats.h"
#include "codecs/element/hadamard.h"
#include "codecs/element/philox.h"
#include "qccl/qccl.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

using codec::ChunkHeader;
using codec::kChunkHeaderBytes;
using codec::kChunkMagic;
using codec::kChunkVersion;
using codec::kFlagStochastic;
using codec::putLittleEndian;
using codec::writeChunkHeader;

QCCL_HD float loadValue(const void* p, int type, uint64_t i) {
  if (type == qcclFloat32) return static_cast<const float*>(p)[i];
  const uint16_t h = static_cast<const uint16_t*>(p)[i];
  return type == qcclBfloat16 ? decode<Bf16>(h) : decode<Fp16>(h);
}

QCCL_HD bool isFinite(float v) { return !rules::isNonFinite(floatBits(v) & kAbsMask); }

QCCL_HD float flipSign(float v, const RhtSigns& signs, uint32_t j) {
  return bitsFloat(floatBits(v) ^ ((signs.words[j >> 5] >> (j & 31)) & 1u) << 31);
}

// One butterfly of stage h over the runs of R elements: pair q of the tile.
QCCL_HD void butterfly(float* x, uint32_t q, uint32_t runSize, uint32_t h) {
  const uint32_t run = q / (runSize / 2), inRun = q % (runSize / 2);
  const uint32_t a = run * runSize + inRun / h * 2 * h + inRun % h, b = a + h;
  const float xa = x[a], xb = x[b];
  x[a] = xa + xb;
  x[b] = xa - xb;
}

// The 32 random bits of stream element `index` (docs/CODECS.md, stochastic rounding).
QCCL_HD uint32_t randomBits(uint64_t seed, uint32_t rank, uint32_t call, uint64_t index) {
  return stochasticRoundingBlock(seed, rank, call, index / 4).v[index % 4];
}

// Where a tile's arrays lie in its shared memory.
struct EncodeShared {
  float* x;        // tile values
  float* p;        // EF with +rht: the values before rotation
  uint32_t* omax;  // per octet: the largest |x| bits
  float* lanes;    // sign1: eight lane sums per block
  float* factor;   // per block: what the elements are scaled by
  float* dfactor;  // per block: what decoded codes are multiplied by
};

// Floats of shared memory a tile of tileElements needs.
QCCL_HD size_t encodeSharedFloats(uint32_t tileElements, bool keepsUnrotated, bool laneSums) {
  const size_t blocks = tileElements / 16;
  return size_t(tileElements) * (keepsUnrotated ? 2 : 1) + tileElements / 8 +
         (laneSums ? 8 * blocks : 0) + 2 * blocks;
}

QCCL_HD EncodeShared encodeShared(float* base, uint32_t tileElements, bool keepsUnrotated,
                                  bool laneSums) {
  EncodeShared s;
  const size_t blocks = tileElements / 16;
  s.x = base;
  s.p = keepsUnrotated ? base + tileElements : nullptr;
  float* next = base + size_t(tileElements) * (keepsUnrotated ? 2 : 1);
  s.omax = reinterpret_cast<uint32_t*>(next);
  next += tileElements / 8;
  s.lanes = laneSums ? next : nullptr;
  next += laneSums ? 8 * blocks : 0;
  s.factor = next;
  s.dfactor = next + blocks;
  return s;
}

// The tile of a chunk that a thread block encodes.
struct EncodeWork {
  const EncodeChunk* chunk;
  uint64_t start;  // first element of the tile in the chunk
  uint32_t n;      // elements of the tile (padding of the last +rht run included)
};

QCCL_HD EncodeWork encodeWork(const EncodeBatch& b, uint64_t block) {
  const EncodeChunk& c = b.chunk[chunkOfTile(b, block)];
  const uint64_t start = (block - c.place.firstTile) * b.tileElements;
  const uint64_t left = start < c.place.paddedCount ? c.place.paddedCount - start : 0;
  return {&c, start, uint32_t(left < b.tileElements ? left : b.tileElements)};
}

QCCL_HD ChunkScale chunkScaleOf(const EncodeChunk& c) {
  ChunkScale s;
  if (c.amax) {
    s.encodeScale = rules::nvfp4EncodeScale(bitsFloat(*c.amax));
    s.decodeScale = 1.0f / s.encodeScale;
  }
  return s;
}

// The phases shared by the encode and the amax pass: load, and +rht's forward rotation.
// Returns the phase index after them, or -1 when `phase` was one of them (and it ran).
QCCL_HD int loadAndRotate(int phase, const EncodeBatch& b, const Cta& cta, const EncodeWork& w,
                          const EncodeShared& s) {
  const uint32_t r = b.spec.rhtSize;
  if (phase == 0) {
    const EncodeChunk& c = *w.chunk;
    const RhtSigns signs = r ? rhtSigns(b.seed) : RhtSigns{};
    for (uint32_t i = cta.thread; i < w.n; i += cta.threads) {
      const uint64_t g = w.start + i;
      float v = 0.0f;
      if (g < c.place.count) {
        v = loadValue(c.input, b.inputType, g);
        if (c.residual && b.residualDecay != 0.0f) {
          v = v + b.residualDecay * loadValue(c.residual, b.residualType, g);
        }
      }
      if (r) {
        if (s.p) s.p[i] = v;
        v = flipSign(v, signs, i % r);
      }
      s.x[i] = v;
    }
    return -1;
  }
  if (r == 0) return phase - 1;
  const int stages = log2Of(r);
  if (phase <= stages) {
    const uint32_t h = 1u << (phase - 1);
    for (uint32_t q = cta.thread; q < w.n / 2; q += cta.threads) butterfly(s.x, q, r, h);
    return -1;
  }
  if (phase == stages + 1) {
    const float norm = rhtNorm(int(r));
    for (uint32_t i = cta.thread; i < w.n; i += cta.threads) s.x[i] *= norm;
    return -1;
  }
  return phase - stages - 2;
}

// nvfp4's first pass: the largest finite |x| of the prepared values, into the chunk's amax word.
struct AmaxTile {
  QCCL_HD static int phases(const EncodeBatch& b) {
    return 1 + (b.spec.rhtSize ? log2Of(b.spec.rhtSize) + 1 : 0) + 2;
  }
  QCCL_HD static size_t sharedFloats(const EncodeBatch& b) { return b.tileElements + kTileThreads; }
  QCCL_HD static void run(int phase, const EncodeBatch& b, const Cta& cta) {
    const EncodeWork w = encodeWork(b, cta.block);
    EncodeShared s{};
    s.x = cta.shared;
    uint32_t* partial = reinterpret_cast<uint32_t*>(cta.shared + b.tileElements);
    const int rest = loadAndRotate(phase, b, cta, w, s);
    if (rest == 0) {
      uint32_t m = 0;
      for (uint32_t i = cta.thread; i < w.n; i += cta.threads) {
        const uint32_t a = floatBits(s.x[i]) & kAbsMask;
        m = rules::isNonFinite(a) || a < m ? m : a;
      }
      partial[cta.thread] = m;
    } else if (rest == 1 && cta.thread == 0) {
      uint32_t m = 0;
      for (uint32_t t = 0; t < cta.threads; ++t) m = partial[t] > m ? partial[t] : m;
      maxInto(w.chunk->amax, m);
    }
  }
};

template <class Q, bool kStochastic>
struct EncodeTile {
  QCCL_HD static bool keepsUnrotated(const EncodeBatch& b) {
    return b.spec.rhtSize != 0 && hasResidual(b);
  }
  QCCL_HD static bool hasResidual(const EncodeBatch& b) {
    for (uint32_t c = 0; c < b.chunkCount; ++c) {
      if (b.chunk[c].residual) return true;
    }
    return false;
  }
  QCCL_HD static int phases(const EncodeBatch& b) {
    const int rotation = b.spec.rhtSize ? log2Of(b.spec.rhtSize) + 1 : 0;
    return 1 + rotation + 3 + (keepsUnrotated(b) ? rotation : 0);
  }
  QCCL_HD static size_t sharedFloats(const EncodeBatch& b) {
    return encodeSharedFloats(b.tileElements, keepsUnrotated(b), Q::kMeanScale);
  }

  QCCL_HD static void run(int phase, const EncodeBatch& b, const Cta& cta) {
    const EncodeWork w = encodeWork(b, cta.block);
    const EncodeShared s =
        encodeShared(cta.shared, b.tileElements, keepsUnrotated(b), Q::kMeanScale);
    const int rest = loadAndRotate(phase, b, cta, w, s);
    if (rest < 0) return;
    if (rest == 0) return reduce(b, cta, w, s);
    if (rest == 1) return scales(b, cta, w, s);
    if (rest == 2) return codes(b, cta, w, s);
    const int stages = log2Of(b.spec.rhtSize);
    if (rest - 2 <= stages) {
      const uint32_t h = 1u << (rest - 3);
      for (uint32_t q = cta.thread; q < w.n / 2; q += cta.threads) {
        butterfly(s.x, q, b.spec.rhtSize, h);
      }
      return;
    }
    residualAfterRotation(b, cta, w, s);
  }

  QCCL_HD static uint32_t blockSize(const EncodeBatch& b, const EncodeWork& w) {
    return b.spec.block ? b.spec.block : (w.n ? w.n : 1);
  }

  QCCL_HD static void reduce(const EncodeBatch& b, const Cta& cta, const EncodeWork& w,
                             const EncodeShared& s) {
    if constexpr (Q::kScaleBytes != 0) reduceBlocks(b, cta, w, s);
  }

  QCCL_HD static void reduceBlocks(const EncodeBatch& b, const Cta& cta, const EncodeWork& w,
                                   const EncodeShared& s) {
    for (uint32_t o = cta.thread; o < (w.n + 7) / 8; o += cta.threads) {
      uint32_t m = 0;
      for (uint32_t i = 8 * o; i < 8 * o + 8 && i < w.n; ++i) {
        const uint32_t a = floatBits(s.x[i]) & kAbsMask;
        m = a > m ? a : m;
      }
      s.omax[o] = m;
    }
    if (Q::kMeanScale) {
      const uint32_t block = blockSize(b, w), blocks = (w.n + block - 1) / block;
      for (uint32_t l = cta.thread; l < 8 * blocks; l += cta.threads) {
        const uint32_t k = l / 8, end = (k + 1) * block < w.n ? (k + 1) * block : w.n;
        float sum = 0.0f;
        for (uint32_t i = k * block + l % 8; i < end; i += 8) {
          sum += bitsFloat(floatBits(s.x[i]) & kAbsMask);
        }
        s.lanes[l] = sum;
      }
    }
  }

  QCCL_HD static void scales(const EncodeBatch& b, const Cta& cta, const EncodeWork& w,
                             const EncodeShared& s) {
    const EncodeChunk& c = *w.chunk;
    const ChunkScale chunk = chunkScaleOf(c);
    if (cta.thread == 0 && w.start == 0) writeHeaderAndPadding(b, c, chunk);
    if constexpr (Q::kScaleBytes != 0) blockScales(b, cta, w, s, chunk);
  }

  QCCL_HD static void blockScales(const EncodeBatch& b, const Cta& cta, const EncodeWork& w,
                                  const EncodeShared& s, const ChunkScale& chunk) {
    const EncodeChunk& c = *w.chunk;
    const uint32_t block = blockSize(b, w), blocks = (w.n + block - 1) / block;
    for (uint32_t k = cta.thread; k < blocks; k += cta.threads) {
      const uint32_t len = (k + 1) * block < w.n ? block : w.n - k * block;
      uint32_t amax = 0;
      for (uint32_t o = k * block / 8; o < (k * block + len + 7) / 8; ++o) {
        amax = s.omax[o] > amax ? s.omax[o] : amax;
      }
      BlockScale scale;
      if constexpr (Q::kMeanScale) {
        scale = Q::meanScale(amax, rules::sign1Mean(s.lanes + 8 * k, len));
      } else {
        scale = Q::scale(amax, chunk);
      }
      uint8_t bytes[4];
      putLittleEndian(bytes, scale.bits, int(Q::kScaleBytes));
      uint8_t* out = c.out + kChunkHeaderBytes + (w.start / block + k) * Q::kScaleBytes;
      for (unsigned i = 0; i < Q::kScaleBytes; ++i) out[i] = bytes[i];
      s.factor[k] = scale.factor;
      s.dfactor[k] = Q::decodeFactor(bytes, chunk);
    }
  }

  QCCL_HD static void writeHeaderAndPadding(const EncodeBatch& b, const EncodeChunk& c,
                                            const ChunkScale& chunk) {
    const ChunkPlace& p = c.place;
    ChunkHeader h;
    h.format = uint8_t(b.spec.format);
    h.flags = b.spec.stochastic ? kFlagStochastic : 0;
    h.sourceType = uint8_t(b.inputType);
    h.block = b.spec.block;
    h.rhtSize = b.spec.rhtSize;
    h.count = p.count;
    h.chunkScale = chunk.encodeScale;
    h.seed = b.seed;
    h.payloadBytes = p.elementsOffset + p.elementsBytes - kChunkHeaderBytes;
    writeChunkHeader(h, c.out);
    for (uint64_t i = p.blocks * uint64_t(Q::kScaleBytes); i < p.scalesBytes; ++i) {
      c.out[kChunkHeaderBytes + i] = 0;
    }
    const uint64_t dataBytes = (p.paddedCount * Q::kElementBits + 7) / 8;
    for (uint64_t i = dataBytes; i < p.elementsBytes; ++i) c.out[p.elementsOffset + i] = 0;
  }

  QCCL_HD static void codes(const EncodeBatch& b, const Cta& cta, const EncodeWork& w,
                            const EncodeShared& s) {
    const EncodeChunk& c = *w.chunk;
    const uint32_t block = blockSize(b, w);
    for (uint32_t o = cta.thread; o < (w.n + 7) / 8; o += cta.threads) {
      const uint32_t first = 8 * o, m = w.n - first < 8 ? w.n - first : 8, k = first / block;
      const float factor = Q::kScaleBytes ? s.factor[k] : 1.0f;
      const float dfactor = Q::kScaleBytes ? s.dfactor[k] : 1.0f;
      const bool bad = Q::kScaleBytes != 0 && factor != factor;  // a non-finite block: zeros
      uint32_t code[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (uint32_t j = 0; j < m; ++j) {
        const uint32_t i = first + j;
        float t = s.x[i];
        if (Q::kScalesElements) t = Q::kDivide ? t / factor : t * factor;
        const uint32_t random =
            kStochastic ? randomBits(b.seed, b.rank, c.call, c.offset + w.start + i) : 0u;
        code[j] = bad ? 0u : Q::template code<kStochastic>(t, random);
        if (c.residual) {
          const float decoded = Q::value(code[j], dfactor);
          if (b.spec.rhtSize) {
            s.x[i] = decoded;  // rotated back in the phases that follow
          } else if (w.start + i < c.place.count) {
            updateResidual(b, c, w.start + i, s.x[i], decoded);
          }
        }
      }
      pack(code, m, c.out + c.place.elementsOffset + (w.start + first) * Q::kElementBits / 8);
    }
  }

  // The codes of m <= 8 consecutive elements, little-endian; codes narrower than a byte from the
  // low bits up (element 2i in the low nibble of a 4-bit pair, element i in bit i of a 1-bit
  // byte).
  QCCL_HD static void pack(const uint32_t* code, uint32_t m, uint8_t* out) {
    if constexpr (Q::kElementBits >= 8) {
      for (uint32_t j = 0; j < m; ++j)
        putLittleEndian(out + j * (Q::kElementBits / 8), code[j], int(Q::kElementBits / 8));
    } else {
      constexpr uint32_t kMask = (1u << Q::kElementBits) - 1;
      uint32_t bits = 0;  // at most 8 codes of at most 4 bits
      for (uint32_t j = 0; j < m; ++j) bits |= (code[j] & kMask) << (j * Q::kElementBits);
      for (uint32_t k = 0; k < (m * Q::kElementBits + 7) / 8; ++k) out[k] = uint8_t(bits >> 8 * k);
    }
  }

  // e = p - decoded where decoded is finite (a non-finite block keeps its residual).
  QCCL_HD static void updateResidual(const EncodeBatch& b, const EncodeChunk& c, uint64_t g,
                                     float p, float decoded) {
    if (!isFinite(decoded)) return;
    if (b.residualType == qcclFloat32) {
      static_cast<float*>(c.residual)[g] = p - decoded;
    } else {
      static_cast<uint16_t*>(c.residual)[g] = uint16_t(encodeRne<Bf16>(p - decoded));
    }
  }

  QCCL_HD static void residualAfterRotation(const EncodeBatch& b, const Cta& cta,
                                            const EncodeWork& w, const EncodeShared& s) {
    const EncodeChunk& c = *w.chunk;
    if (!c.residual) return;
    const uint32_t r = b.spec.rhtSize;
    const float norm = rhtNorm(int(r));
    const RhtSigns signs = rhtSigns(b.seed);
    for (uint32_t i = cta.thread; i < w.n; i += cta.threads) {
      if (w.start + i >= c.place.count) continue;
      const float decoded = flipSign(s.x[i] * norm, signs, i % r);
      updateResidual(b, c, w.start + i, s.p[i], decoded);
    }
  }
};

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
