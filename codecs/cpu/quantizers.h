// Block quantizers: how the blocks of a tile become scales and packed elements, and back, on the
// CPU. The arithmetic of each format is codecs/element/format_rules.h, shared with the device
// tiles; here it is organised in passes over a whole tile, so that every loop is long and
// vectorises:
//   encodeScales(x, n, block, chunk, scales, factors)   per block: scale bytes and the factor
//                                                        its elements are divided (kDivide) or
//                                                        multiplied by; NaN = non-finite block
//   encodeCodes<kStochastic>(t, n, random, elements)     scaled values -> packed codes
//   decodeScales(scales, blocks, chunk, factors)         per block: what decoded codes multiply
//   decodeCodes(elements, n, factor, out)                one block's codes -> values * factor
// The drivers (kernels_impl.h) apply the factors and zero the elements of non-finite blocks.
//
// Included once per CPU target inside that target's inline namespace: no std templates here.
#pragma once

#include "codecs/cpu/minifloat_vec.h"
#include "codecs/cpu/nibble_vec.h"
#include "codecs/cpu/stochastic_vec.h"
#include "codecs/element/format_rules.h"

// Quantizers are inlined into the block loops, which pass full blocks' length as a
// compile-time constant: the loops over 16 or 32 elements then unroll and vectorise.
#define QCCL_ALWAYS_INLINE inline __attribute__((always_inline))
#define QCCL_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))

namespace qccl {
inline namespace QCCL_ISA {
namespace quant {

using rules::isNonFinite;
using ChunkContext = rules::ChunkScale;

// One code per byte for a block: the largest block is kMaxBlock (codec_spec.h) elements.
constexpr size_t kMaxBlockElements = 8192;
// A tile holds at most this many blocks (tileElements in cpu/dispatch.cc).
constexpr size_t kMaxTileBlocks = 256;

// Largest |x| of each block as fp32 bits; >= kInfBits means a NaN or infinity is present.
QCCL_ALWAYS_INLINE void blockAbsMax(const float* x, size_t n, size_t block, uint32_t* amax) {
  for (size_t b = 0, k = 0; b < n; b += block, ++k) {
    const size_t len = n - b < block ? n - b : block;
    uint32_t m = 0;
    for (size_t i = 0; i < len; ++i) m = maxU32(m, floatBits(x[b + i]) & kAbsMask);
    amax[k] = m;
  }
}

QCCL_ALWAYS_INLINE size_t blockCount(size_t n, size_t block) { return (n + block - 1) / block; }

// The scale pass of the one-byte-scale formats: per block the scale byte scaleByte(amaxBits) and
// the factor factor(byte). In three loops over the blocks, each of one type: a loop that stores
// the byte and the factor together does not vectorise.
template <class ScaleByte, class Factor>
QCCL_ALWAYS_INLINE void byteScales(const float* x, size_t n, size_t block, uint8_t* scales,
                                   float* factors, ScaleByte scaleByte, Factor factor) {
  uint32_t amax[kMaxTileBlocks], bytes[kMaxTileBlocks];
  blockAbsMax(x, n, block, amax);
  const size_t blocks = blockCount(n, block);
  for (size_t k = 0; k < blocks; ++k) bytes[k] = scaleByte(amax[k]) & 0xFF;
  for (size_t k = 0; k < blocks; ++k) factors[k] = factor(bytes[k]);
  for (size_t k = 0; k < blocks; ++k) scales[k] = uint8_t(bytes[k]);
}

// fp32 scales travel little-endian, written byte by byte so the layout holds on any host.
QCCL_ALWAYS_INLINE void storeScaleF32(uint8_t* scale, float value) {
  const uint32_t u = floatBits(value);
  for (int i = 0; i < 4; ++i) scale[i] = uint8_t(u >> (8 * i));
}

QCCL_ALWAYS_INLINE float loadScaleF32(const uint8_t* scale) {
  return bitsFloat(uint32_t(scale[0]) | uint32_t(scale[1]) << 8 | uint32_t(scale[2]) << 16 |
                   uint32_t(scale[3]) << 24);
}

// 4-bit elements travel in pairs, element 2i in the low nibble of byte i. Kernels compute one
// code per byte first and pack in a separate pass, so that both loops vectorise.
QCCL_ALWAYS_INLINE void packNibbles(const uint8_t* codes, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n / 2; ++i) {
    uint16_t pair;  // a little-endian pair of codes: one 16-bit lane, so this vectorises
    std::memcpy(&pair, codes + 2 * i, 2);
    out[i] = uint8_t((pair & 0xF) | ((pair >> 4) & 0xF0));
  }
  if (n % 2) out[n / 2] = uint8_t(codes[n - 1] & 0xF);
}

// 2-bit elements travel four to a byte, element 4i + j in bits 2j, 2j + 1 of byte i.
QCCL_ALWAYS_INLINE void packCrumbs(const uint8_t* codes, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n / 4; ++i) {
    uint32_t quad;  // four little-endian codes: one 32-bit lane, so this vectorises
    std::memcpy(&quad, codes + 4 * i, 4);
    out[i] =
        uint8_t((quad & 0x3) | ((quad >> 6) & 0xC) | ((quad >> 12) & 0x30) | ((quad >> 18) & 0xC0));
  }
  if (n % 4) {
    uint32_t last = 0;
    for (size_t j = 0; j < n % 4; ++j) last |= uint32_t(codes[n / 4 * 4 + j] & 3) << (2 * j);
    out[n / 4] = uint8_t(last);
  }
}

QCCL_ALWAYS_INLINE void unpackNibbles(const uint8_t* in, size_t n, uint8_t* codes) {
  for (size_t i = 0; i < n / 2; ++i) {
    codes[2 * i] = in[i] & 0xF;
    codes[2 * i + 1] = in[i] >> 4;
  }
  if (n % 2) codes[n - 1] = in[n / 2] & 0xF;
}

// Stochastic codes in two passes over a step of the tile: the values rounded stochastically
// (cpu/stochastic_vec.h), which leaves them exact in the target, then Q's round-to-nearest codes.
template <class Q, class Rule>
QCCL_ALWAYS_INLINE void encodeStochastic(const float* t, size_t n, const uint32_t* random,
                                         uint8_t* out) {
  constexpr size_t kStep = 512;  // a multiple of 8: every step starts on a whole byte
  float rounded[kStep];
  for (size_t s = 0; s < n; s += kStep) {
    const size_t len = n - s < kStep ? n - s : kStep;
    stochasticRoundFloats<Rule>(t + s, len, random + s, rounded);
    Q::template encodeCodes<false>(rounded, len, nullptr, out + s * Q::kElementBits / 8);
  }
}

// ---- element codes
// -------------------------------------------------------------------------------

// The 16 values of a 4-bit format, from decode<F>: 4-bit elements decode by table lookup, eight
// at a time where the target has vectors for it (cpu/nibble_vec.h).
template <class F>
struct NibbleValues {
  float value[16];
  NibbleValues() {
    for (uint32_t c = 0; c < 16; ++c) value[c] = decode<F>(c);
  }
};

template <class F>
QCCL_ALWAYS_INLINE const float* nibbleValues() {
  static const NibbleValues<F> table;
  return table.value;
}

// Minifloat codes: one per byte (8-bit formats), two per byte (E2M1), two bytes little-endian
// (fp16, bf16).
template <class F>
struct MinifloatCodes {
  static constexpr unsigned kElementBits =
      F::kMagBits + 1 == 4 ? 4 : (F::kMagBits + 1 == 8 ? 8 : 16);

  template <bool kStochastic>
  static QCCL_ALWAYS_INLINE void encodeCodes(const float* t, size_t n, const uint32_t* random,
                                             uint8_t* out) {
    if constexpr (kStochastic) {
      encodeStochastic<MinifloatCodes, MinifloatRounding<F>>(t, n, random, out);
    } else if constexpr (kElementBits == 16) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t c = encodeRne<F>(t[i]);
        out[2 * i] = uint8_t(c);
        out[2 * i + 1] = uint8_t(c >> 8);
      }
    } else if constexpr (kElementBits == 8) {
      for (size_t i = encodeMinifloatVectors<F>(t, n, out); i < n; ++i)
        out[i] = uint8_t(encodeRne<F>(t[i]));
    } else {
      constexpr size_t kStep = 512;  // codes per pass through a byte buffer, then packed
      uint8_t codes[kStep];
      for (size_t s = 0; s < n; s += kStep) {
        const size_t len = n - s < kStep ? n - s : kStep;
        for (size_t i = encodeMinifloatVectors<F>(t + s, len, codes); i < len; ++i)
          codes[i] = uint8_t(encodeRne<F>(t[s + i]));
        packNibbles(codes, len, out + s / 2);
      }
    }
  }

  // The 16-bit casts have no scale: their factor is ignored rather than multiplied by 1.
  static QCCL_ALWAYS_INLINE void decodeCodes(const uint8_t* in, size_t n, float factor,
                                             float* out) {
    if constexpr (kElementBits == 16) {
      for (size_t i = 0; i < n; ++i)
        out[i] = decode<F>(uint32_t(in[2 * i]) | uint32_t(in[2 * i + 1]) << 8);
    } else if constexpr (kElementBits == 8) {
      for (size_t i = decodeMinifloat8Vectors<F>(in, n, factor, out); i < n; ++i)
        out[i] = decode<F>(in[i]) * factor;
    } else {
      const float* values = nibbleValues<F>();
      const size_t done = decodeNibblesVectors(in, n, values, factor, out);
      for (size_t i = done / 2; i < n / 2; ++i) {
        out[2 * i] = values[in[i] & 0xF] * factor;
        out[2 * i + 1] = values[in[i] >> 4] * factor;
      }
      if (n % 2) out[n - 1] = values[in[n / 2] & 0xF] * factor;
    }
  }
};

// Formats without block scales.
struct ElementWise {
  static constexpr size_t kDefaultBlock = 0;
  static constexpr unsigned kScaleBytes = 0;
  static constexpr bool kNeedsChunkScale = false;
  static constexpr bool kDivide = false;
  static constexpr bool kScalesElements = false;
  static QCCL_ALWAYS_INLINE void encodeScales(const float*, size_t, size_t, const ChunkContext&,
                                              uint8_t*, float*) {}
  static QCCL_ALWAYS_INLINE void decodeScales(const uint8_t*, size_t, const ChunkContext&, float*) {
  }
};

// bf16, fp16: a rounded cast, nothing else.
template <class F>
struct CastQuantizer : ElementWise, MinifloatCodes<F> {};

// Format none with fp32 input: the bytes themselves.
struct RawFloatQuantizer : ElementWise {
  static constexpr unsigned kElementBits = 32;

  template <bool kStochastic>
  static QCCL_ALWAYS_INLINE void encodeCodes(const float* t, size_t n, const uint32_t*,
                                             uint8_t* out) {
    std::memcpy(out, t, 4 * n);
  }

  static QCCL_ALWAYS_INLINE void decodeCodes(const uint8_t* in, size_t n, float, float* out) {
    std::memcpy(out, in, 4 * n);
  }
};

// ---- block-scaled formats
// ------------------------------------------------------------------------

QCCL_ALWAYS_INLINE void loadScalesF32(const uint8_t* scales, size_t blocks, float* factors) {
  for (size_t k = 0; k < blocks; ++k) factors[k] = loadScaleF32(scales + 4 * k);
}

// fp32 block scale s = amax / Q::elementMax(); elements are divided by s (by 1 when s == 0:
// amax == 0, or an underflow, gives zeros all the same). Shared by fp8 and the integers.
template <class Q>
struct AmaxOverMaxScale {
  static constexpr unsigned kScaleBytes = 4;
  static constexpr bool kNeedsChunkScale = false;
  static constexpr bool kDivide = true;
  static constexpr bool kScalesElements = true;

  static QCCL_ALWAYS_INLINE void encodeScales(const float* x, size_t n, size_t block,
                                              const ChunkContext&, uint8_t* scales,
                                              float* divisors) {
    uint32_t amax[kMaxTileBlocks];
    blockAbsMax(x, n, block, amax);
    for (size_t k = 0; k < blockCount(n, block); ++k) {
      const float s = rules::amaxOverMaxScale(amax[k], Q::elementMax());
      storeScaleF32(scales + 4 * k, s);
      divisors[k] = rules::amaxOverMaxDivisor(s);
    }
  }

  static QCCL_ALWAYS_INLINE void decodeScales(const uint8_t* scales, size_t blocks,
                                              const ChunkContext&, float* factors) {
    loadScalesF32(scales, blocks, factors);
  }
};

// fp8e4m3 / fp8e5m2: fp32 scale s = amax / elem_max per block; element = F(x / s).
template <class F>
struct Fp8Quantizer : MinifloatCodes<F>, AmaxOverMaxScale<Fp8Quantizer<F>> {
  static constexpr size_t kDefaultBlock = 128;
  static QCCL_ALWAYS_INLINE float elementMax() { return maxValue<F>(); }
};

// OCP MX (mxfp8, mxfp4): E8M0 scale 2^ceil(log2(amax / elem_max)); element = F(x * 2^-e),
// which is exactly x / 2^e.
template <class F>
struct MxQuantizer : MinifloatCodes<F> {
  static constexpr size_t kDefaultBlock = 32;
  static constexpr unsigned kScaleBytes = 1;
  static constexpr bool kNeedsChunkScale = false;
  static constexpr bool kDivide = false;
  static constexpr bool kScalesElements = true;

  static QCCL_ALWAYS_INLINE void encodeScales(const float* x, size_t n, size_t block,
                                              const ChunkContext&, uint8_t* scales,
                                              float* factors) {
    byteScales(
        x, n, block, scales, factors, [](uint32_t amax) { return rules::mxScaleByte<F>(amax); },
        [](uint32_t scale) { return rules::mxFactor(scale); });
  }

  static QCCL_ALWAYS_INLINE void decodeScales(const uint8_t* scales, size_t blocks,
                                              const ChunkContext&, float* factors) {
    for (size_t k = 0; k < blocks; ++k) factors[k] = decodeE8M0(scales[k]);
  }
};

// NVFP4, Transformer Engine's recipe: chunk scale s_enc = 448 * 6 / chunk_amax; block scale
// E4M3(block_amax * (s_enc * fp32(1/6))); element E2M1(x * min(1 / (scale * (1 / s_enc)), max)).
struct NvFp4Quantizer : MinifloatCodes<E2M1> {
  static constexpr size_t kDefaultBlock = 16;
  static constexpr unsigned kScaleBytes = 1;
  static constexpr bool kNeedsChunkScale = true;
  static constexpr bool kDivide = false;
  static constexpr bool kScalesElements = true;

  static float encodeScale(float chunkAmax) { return rules::nvfp4EncodeScale(chunkAmax); }

  static QCCL_ALWAYS_INLINE void encodeScales(const float* x, size_t n, size_t block,
                                              const ChunkContext& chunk, uint8_t* scales,
                                              float* factors) {
    byteScales(
        x, n, block, scales, factors,
        [&](uint32_t amax) { return rules::nvfp4ScaleByte(amax, chunk); },
        [&](uint32_t scale) { return rules::nvfp4Factor(scale, chunk); });
  }

  static QCCL_ALWAYS_INLINE void decodeScales(const uint8_t* scales, size_t blocks,
                                              const ChunkContext& chunk, float* factors) {
    for (size_t k = 0; k < blocks; ++k) factors[k] = rules::nvfp4DecodeFactor(scales[k], chunk);
  }
};

// fp4ue5m3: block scale S = the smallest UE5M3 value >= block_amax / 6, so nothing clips and no
// chunk scale is needed; element = E2M1(x * fp32(1 / S)).
struct Fp4Ue5m3Quantizer : MinifloatCodes<E2M1> {
  static constexpr size_t kDefaultBlock = 16;
  static constexpr unsigned kScaleBytes = 1;
  static constexpr bool kNeedsChunkScale = false;
  static constexpr bool kDivide = false;
  static constexpr bool kScalesElements = true;

  static QCCL_ALWAYS_INLINE void encodeScales(const float* x, size_t n, size_t block,
                                              const ChunkContext&, uint8_t* scales,
                                              float* factors) {
    byteScales(
        x, n, block, scales, factors, [](uint32_t amax) { return rules::ue5m3ScaleByte(amax); },
        [](uint32_t scale) { return rules::ue5m3Factor(scale); });
  }

  static QCCL_ALWAYS_INLINE void decodeScales(const uint8_t* scales, size_t blocks,
                                              const ChunkContext&, float* factors) {
    for (size_t k = 0; k < blocks; ++k) factors[k] = decode<UE5M3>(scales[k]);
  }
};

// Symmetric integers (ZeRO++ style): fp32 scale s = amax / qmax; q = clamp(rne(x / s)).
template <int kBits>
struct IntQuantizer : AmaxOverMaxScale<IntQuantizer<kBits>> {
  static constexpr size_t kDefaultBlock = kBits == 8 ? 128 : 64;
  static constexpr unsigned kElementBits = kBits;
  static constexpr int kMax = (1 << (kBits - 1)) - 1;
  static QCCL_ALWAYS_INLINE float elementMax() { return float(kMax); }

  static QCCL_ALWAYS_INLINE uint8_t code(float t) {
    return uint8_t(rules::intCode<kBits, false>(t, 0u));
  }

  template <bool kStochastic>
  static QCCL_ALWAYS_INLINE void encodeCodes(const float* t, size_t n, const uint32_t* random,
                                             uint8_t* out) {
    if constexpr (kStochastic) {
      encodeStochastic<IntQuantizer, IntegerRounding>(t, n, random, out);
    } else if constexpr (kBits == 8) {
      for (size_t i = 0; i < n; ++i) out[i] = code(t[i]);
    } else {
      constexpr size_t kStep = 512;
      uint8_t codes[kStep];
      for (size_t s = 0; s < n; s += kStep) {
        const size_t len = n - s < kStep ? n - s : kStep;
        for (size_t i = 0; i < len; ++i) codes[i] = code(t[s + i]);
        packNibbles(codes, len, out + s / 2);
      }
    }
  }

  // Sign-extends each element's kBits-bit two's complement code.
  static QCCL_ALWAYS_INLINE void decodeCodes(const uint8_t* in, size_t n, float s, float* out) {
    if constexpr (kBits == 8) {
      for (size_t i = 0; i < n; ++i) out[i] = rules::intValue<8>(in[i]) * s;
    } else {
      for (size_t i = 0; i < n / 2; ++i) {
        out[2 * i] = rules::intValue<4>(in[i]) * s;
        out[2 * i + 1] = rules::intValue<4>(in[i], 4) * s;
      }
      if (n % 2) out[n - 1] = rules::intValue<4>(in[n / 2]) * s;
    }
  }
};

// int2: fp32 scale s = amax / 1.5; q = floor(clamp(x / s, -2, 1)), decoded (q + 1/2) * s.
struct Int2Quantizer : AmaxOverMaxScale<Int2Quantizer> {
  static constexpr size_t kDefaultBlock = 128;
  static constexpr unsigned kElementBits = 2;
  static QCCL_ALWAYS_INLINE float elementMax() { return rules::kInt2Max; }

  template <bool>
  static QCCL_ALWAYS_INLINE void encodeCodes(const float* t, size_t n, const uint32_t*,
                                             uint8_t* out) {
    constexpr size_t kStep = 512;
    uint8_t codes[kStep];
    for (size_t s = 0; s < n; s += kStep) {
      const size_t len = n - s < kStep ? n - s : kStep;
      for (size_t i = 0; i < len; ++i) codes[i] = uint8_t(rules::int2Code(t[s + i]));
      packCrumbs(codes, len, out + s / 4);
    }
  }

  // Whole bytes first, four codes each, so that the loop vectorises.
  static QCCL_ALWAYS_INLINE void decodeCodes(const uint8_t* in, size_t n, float s, float* out) {
    for (size_t b = 0; b < n / 4; ++b) {
      for (size_t j = 0; j < 4; ++j) out[4 * b + j] = rules::int2Value(in[b] >> (2 * j), s);
    }
    for (size_t i = n / 4 * 4; i < n; ++i) {
      out[i] = rules::int2Value(in[i / 4] >> (2 * (i % 4)), s);
    }
  }
};

// sign1: one sign bit per element (bit i % 8 of byte i / 8), fp32 scale = mean |x| of the block,
// decoded as +-scale. The mean's summation order is part of the definition: eight
// lanes, lane l summing elements l, l + 8, ... in order, then
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), over n.
struct Sign1Quantizer {
  static constexpr size_t kDefaultBlock = 2048;
  static constexpr unsigned kScaleBytes = 4;
  static constexpr unsigned kElementBits = 1;
  static constexpr bool kNeedsChunkScale = false;
  static constexpr bool kDivide = false;
  static constexpr bool kScalesElements = false;  // the signs need no scaling before encoding

  static QCCL_ALWAYS_INLINE float meanAbs(const float* x, size_t n) {
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const size_t full = n / 8 * 8;
    for (size_t i = 0; i < full; i += 8) {
      for (int l = 0; l < 8; ++l) lane[l] += bitsFloat(floatBits(x[i + l]) & kAbsMask);
    }
    for (size_t i = full; i < n; ++i) lane[i - full] += bitsFloat(floatBits(x[i]) & kAbsMask);
    return rules::sign1Mean(lane, n);
  }

  static QCCL_ALWAYS_INLINE void encodeScales(const float* x, size_t n, size_t block,
                                              const ChunkContext&, uint8_t* scales,
                                              float* factors) {
    uint32_t amax[kMaxTileBlocks];
    blockAbsMax(x, n, block, amax);
    for (size_t b = 0, k = 0; b < n; b += block, ++k) {
      const size_t len = n - b < block ? n - b : block;
      factors[k] = isNonFinite(amax[k]) ? rules::quietNan() : meanAbs(x + b, len);
      storeScaleF32(scales + 4 * k, factors[k]);
    }
  }

  // Whole bytes first, eight signs each with no bound check, so that the loops vectorise.
  template <bool kStochastic>
  static QCCL_ALWAYS_INLINE void encodeCodes(const float* t, size_t n, const uint32_t*,
                                             uint8_t* out) {
    for (size_t b = 0; b < n / 8; ++b) {
      uint32_t byte = 0;
      for (size_t k = 0; k < 8; ++k) byte |= rules::signBit(t[8 * b + k]) << k;
      out[b] = uint8_t(byte);
    }
    if (n % 8) {
      uint32_t byte = 0;
      for (size_t k = 0; k < n % 8; ++k) byte |= rules::signBit(t[n / 8 * 8 + k]) << k;
      out[n / 8] = uint8_t(byte);
    }
  }

  static QCCL_ALWAYS_INLINE void decodeScales(const uint8_t* scales, size_t blocks,
                                              const ChunkContext&, float* factors) {
    loadScalesF32(scales, blocks, factors);
  }

  static QCCL_ALWAYS_INLINE void decodeCodes(const uint8_t* in, size_t n, float scale, float* out) {
    for (size_t b = 0; b < n / 8; ++b) {
      for (size_t k = 0; k < 8; ++k) out[8 * b + k] = rules::signValue(uint32_t(in[b]) >> k, scale);
    }
    for (size_t i = n / 8 * 8; i < n; ++i) {
      out[i] = rules::signValue(uint32_t(in[i / 8] >> (i % 8)), scale);
    }
  }
};

}  // namespace quant
}  // namespace QCCL_ISA
}  // namespace qccl
