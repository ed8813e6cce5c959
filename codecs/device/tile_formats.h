// The formats as the device tiles see them: per block, the stored scale and the factor from the
// block's largest magnitude; per element, the code of a scaled value and the value of a code.
// Each is the corresponding CPU quantizer (codecs/cpu/quantizers.h) one element at a time,
// through the same rules (codecs/element/format_rules.h), so a tile encodes and decodes the CPU's
// bits. Compiled by nvcc for the kernels and by the host compiler for the tests that emulate them.
#pragma once

#include "codecs/element/format_rules.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

using rules::ChunkScale;

// A block's scale as a tile keeps it: the stored bits (little-endian, the format's scale bytes)
// and the factor its elements are scaled by.
struct BlockScale {
  uint32_t bits;
  float factor;
};

QCCL_HD float loadF32(const uint8_t* p) {
  return bitsFloat(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                   uint32_t(p[3]) << 24);
}

// Members every format has: kElementBits (per code), kScaleBytes (per block; 0: element-wise),
// kDivide (elements divided, not multiplied, by the factor), kScalesElements (codes are of the
// scaled values; sign1 takes the signs as they are), kMeanScale (the scale is the block's mean
// |x|, sign1); scale(amax, chunk) (block-scaled formats); decodeFactor(scale bytes, chunk);
// code<kStochastic>(t, random); value(code, factor).
struct BlockScaled {
  static constexpr bool kDivide = false;
  static constexpr bool kScalesElements = true;
  static constexpr bool kMeanScale = false;
};

struct ElementWise : BlockScaled {
  static constexpr unsigned kScaleBytes = 0;
  static constexpr bool kScalesElements = false;
  QCCL_HD static float decodeFactor(const uint8_t*, const ChunkScale&) { return 1.0f; }
};

// bf16, fp16, and format none on bf16/fp16 input: a rounded cast.
template <class F>
struct CastTile : ElementWise {
  static constexpr unsigned kElementBits = 16;
  template <bool kStochastic>
  QCCL_HD static uint32_t code(float t, uint32_t random) {
    return rules::minifloatCode<F, kStochastic>(t, random);
  }
  QCCL_HD static float value(uint32_t code, float) { return decode<F>(code); }
};

// Format none on fp32 input: the bits themselves.
struct RawTile : ElementWise {
  static constexpr unsigned kElementBits = 32;
  template <bool>
  QCCL_HD static uint32_t code(float t, uint32_t) {
    return floatBits(t);
  }
  QCCL_HD static float value(uint32_t code, float) { return bitsFloat(code); }
};

// fp32 block scale s = amax / Q::elementMax(), the elements divided by it (by 1 when s is 0):
// fp8 and the integers.
template <class Q>
struct AmaxOverMaxTile : BlockScaled {
  static constexpr unsigned kScaleBytes = 4;
  static constexpr bool kDivide = true;
  QCCL_HD static BlockScale scale(uint32_t amax, const ChunkScale&) {
    const float s = rules::amaxOverMaxScale(amax, Q::elementMax());
    return {floatBits(s), rules::amaxOverMaxDivisor(s)};
  }
  QCCL_HD static float decodeFactor(const uint8_t* scale, const ChunkScale&) {
    return loadF32(scale);
  }
};

// Codes of a minifloat format F, values as code times the block's factor; Base the scale rule.
template <class F, class Base = BlockScaled>
struct MinifloatElements : Base {
  static constexpr unsigned kElementBits = F::kMagBits + 1;
  template <bool kStochastic>
  QCCL_HD static uint32_t code(float t, uint32_t random) {
    return rules::minifloatCode<F, kStochastic>(t, random);
  }
  QCCL_HD static float value(uint32_t code, float factor) { return decode<F>(code) * factor; }
};

template <class F>
struct Fp8Tile : MinifloatElements<F, AmaxOverMaxTile<Fp8Tile<F>>> {
  QCCL_HD static float elementMax() { return maxValue<F>(); }
};

template <class F>
struct MxTile : MinifloatElements<F> {
  static constexpr unsigned kScaleBytes = 1;
  QCCL_HD static BlockScale scale(uint32_t amax, const ChunkScale&) {
    const uint32_t byte = rules::mxScaleByte<F>(amax);
    return {byte, rules::mxFactor(byte)};
  }
  QCCL_HD static float decodeFactor(const uint8_t* scale, const ChunkScale&) {
    return decodeE8M0(*scale);
  }
};

struct NvFp4Tile : MinifloatElements<E2M1> {
  static constexpr unsigned kScaleBytes = 1;
  QCCL_HD static BlockScale scale(uint32_t amax, const ChunkScale& chunk) {
    const uint32_t byte = rules::nvfp4ScaleByte(amax, chunk);
    return {byte, rules::nvfp4Factor(byte, chunk)};
  }
  QCCL_HD static float decodeFactor(const uint8_t* scale, const ChunkScale& chunk) {
    return rules::nvfp4DecodeFactor(*scale, chunk);
  }
};

struct Ue5m3Tile : MinifloatElements<E2M1> {
  static constexpr unsigned kScaleBytes = 1;
  QCCL_HD static BlockScale scale(uint32_t amax, const ChunkScale&) {
    const uint32_t byte = rules::ue5m3ScaleByte(amax);
    return {byte, rules::ue5m3Factor(byte)};
  }
  QCCL_HD static float decodeFactor(const uint8_t* scale, const ChunkScale&) {
    return decode<UE5M3>(*scale);
  }
};

template <int kBits>
struct IntTile : AmaxOverMaxTile<IntTile<kBits>> {
  static constexpr unsigned kElementBits = kBits;
  QCCL_HD static float elementMax() { return float((1 << (kBits - 1)) - 1); }
  template <bool kStochastic>
  QCCL_HD static uint32_t code(float t, uint32_t random) {
    return rules::intCode<kBits, kStochastic>(t, random);
  }
  QCCL_HD static float value(uint32_t code, float factor) {
    return rules::intValue<kBits>(code) * factor;
  }
};

// int2: the integers' scale rule with 1.5 for qmax; four levels, no zero (rules::int2Code).
struct Int2Tile : AmaxOverMaxTile<Int2Tile> {
  static constexpr unsigned kElementBits = 2;
  QCCL_HD static float elementMax() { return rules::kInt2Max; }
  template <bool>
  QCCL_HD static uint32_t code(float t, uint32_t) {
    return rules::int2Code(t);
  }
  QCCL_HD static float value(uint32_t code, float factor) { return rules::int2Value(code, factor); }
};

// sign1: the scale is the block's mean |x| (NaN for a non-finite block), the codes the signs.
struct Sign1Tile : BlockScaled {
  static constexpr unsigned kElementBits = 1;
  static constexpr unsigned kScaleBytes = 4;
  static constexpr bool kScalesElements = false;
  static constexpr bool kMeanScale = true;
  QCCL_HD static BlockScale meanScale(uint32_t amax, float mean) {
    const float s = rules::isNonFinite(amax) ? rules::quietNan() : mean;
    return {floatBits(s), s};
  }
  QCCL_HD static float decodeFactor(const uint8_t* scale, const ChunkScale&) {
    return loadF32(scale);
  }
  template <bool>
  QCCL_HD static uint32_t code(float t, uint32_t) {
    return rules::signBit(t);
  }
  QCCL_HD static float value(uint32_t code, float factor) { return rules::signValue(code, factor); }
};

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
