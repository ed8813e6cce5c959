// Each wire format's arithmetic, one block or one element at a time (docs/CODECS.md): how a
// block's largest magnitude becomes its stored scale and the factor its elements are scaled by,
// how a scaled value becomes a code, and how codes and scales decode. The CPU tile passes
// (codecs/cpu/quantizers.h) and the device tiles (codecs/device/) both call these, so both compute
// the same bits. Branch-free selects, so that the CPU loops calling them vectorise.
#pragma once

#include "codecs/element/e8m0.h"
#include "codecs/element/host_device.h"
#include "codecs/element/minifloat.h"
#include "codecs/element/stochastic_round.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace rules {

constexpr float kFloatMax = 3.40282347e38f;

QCCL_HD float quietNan() { return bitsFloat(0x7fc00000u); }

// A block's largest |x| as fp32 bits; >= kInfBits means a NaN or an infinity is present.
QCCL_HD bool isNonFinite(uint32_t absMax) { return absMax >= kInfBits; }

// nvfp4's two-level scale: what every block of one chunk shares (1 for the other formats).
struct ChunkScale {
  float encodeScale = 1.0f;  // s_enc, in the chunk header
  float decodeScale = 1.0f;  // 1 / s_enc
};

// Per block: the stored scale from the block's largest |x|, and from the stored scale the factor
// the elements are multiplied by (divided by, for the fp32-scaled formats); a block holding a NaN
// or an infinity stores its format's NaN, and its factor is NaN. Separate functions, not one
// returning both: the CPU loops over blocks vectorise better so.

// fp8 and the integers: the stored fp32 scale s = amax / elemMax, and the divisor of the
// elements: s, or 1 when s == 0 (amax == 0, or an underflow, gives zeros all the same).
QCCL_HD float amaxOverMaxScale(uint32_t amax, float elemMax) {
  return isNonFinite(amax) ? quietNan() : bitsFloat(amax) / elemMax;
}

QCCL_HD float amaxOverMaxDivisor(float scale) { return scale == 0.0f ? 1.0f : scale; }

// OCP MX: E8M0 scale 2^ceil(log2(amax / elemMax)); the elements are multiplied by 2^-e.
template <class F>
QCCL_HD uint32_t mxScaleByte(uint32_t amax) {
  return isNonFinite(amax) ? kE8M0Nan : mxScaleCode(bitsFloat(amax), maxValue<F>());
}

QCCL_HD float mxFactor(uint32_t scale) {
  return scale == kE8M0Nan ? quietNan() : exp2Int(127 - int(scale));
}

// NVFP4 (Transformer Engine): the chunk's s_enc = 448 * 6 / chunk_amax (1 when either is 0).
QCCL_HD float nvfp4EncodeScale(float chunkAmax) {
  const float s = (448.0f * 6.0f) / chunkAmax;
  const float clamped = s > kFloatMax ? kFloatMax : s;
  return (chunkAmax == 0.0f || clamped == 0.0f) ? 1.0f : clamped;
}

// NVFP4 block scale E4M3(block_amax * (s_enc * fp32(1/6))) (a finite amax never rounds to E4M3's
// NaN: it saturates); the elements are multiplied by min(1 / (scale * (1 / s_enc)), max).
QCCL_HD uint32_t nvfp4ScaleByte(uint32_t amax, const ChunkScale& chunk) {
  constexpr float kInvElemMax = 1.0f / 6.0f;
  const uint32_t code = encodeRne<E4M3>(bitsFloat(amax) * (chunk.encodeScale * kInvElemMax));
  return isNonFinite(amax) ? E4M3::kNanCode : code;
}

QCCL_HD float nvfp4Factor(uint32_t scale, const ChunkScale& chunk) {
  const float reciprocal = 1.0f / (decode<E4M3>(scale) * chunk.decodeScale);  // NaN for NaN
  return reciprocal > kFloatMax ? kFloatMax : reciprocal;
}

QCCL_HD float nvfp4DecodeFactor(uint32_t code, const ChunkScale& chunk) {
  return decode<E4M3>(code) * chunk.decodeScale;
}

// fp4ue5m3: the smallest UE5M3 value S >= amax / 6, so nothing clips; elements times fp32(1 / S).
QCCL_HD uint32_t ue5m3ScaleCode(float amax) {
  const uint32_t code = encodeRne<UE5M3>(amax / 6.0f);
  // 6 * value is exact in fp32 (at most 6 significant bits), so this test is exact.
  // Both tests as 0/1 integers: combined as bools, GCC leaves the loops that call this scalar.
  const uint32_t below = 6.0f * decode<UE5M3>(code) < amax ? 1u : 0u;
  return code + (below & (code < UE5M3::kMaxCode ? 1u : 0u));
}

QCCL_HD uint32_t ue5m3ScaleByte(uint32_t amax) {
  const uint32_t code = ue5m3ScaleCode(bitsFloat(amax));
  return isNonFinite(amax) ? UE5M3::kNanCode : code;
}

QCCL_HD float ue5m3Factor(uint32_t scale) {
  const float s = decode<UE5M3>(scale);  // NaN for NaN
  return s == 0.0f ? 0.0f : 1.0f / s;
}

// sign1's scale, mean |x| of the block, summed in a fixed order: eight lanes, lane l adding
// |x_l|, |x_{l+8}|, ... in turn, then ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), over n.
QCCL_HD float sign1Mean(const float* lane, size_t n) {
  const float sum =
      ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  return sum / float(n);
}

// ---- element codes --------------------------------------------------------------------------

// Stochastic rounding of a finite value may round up past fp32's largest value to infinity;
// formats that keep infinity (bf16, fp16) must still saturate it, as round-to-nearest does
// (docs/CODECS.md: finite values saturate). The others saturate infinity anyway.
template <class F>
QCCL_HD float minifloatStochasticValue(float t, uint32_t random) {
  const float r = stochasticRoundTo<F>(t, random);
  const bool overflowed =
      (floatBits(r) & kAbsMask) == kInfBits && (floatBits(t) & kAbsMask) < kInfBits;
  return overflowed ? bitsFloat((floatBits(t) & 0x80000000u) | floatBits(kFloatMax)) : r;
}

// The rounded value is exact in F: round to nearest only saturates and packs it.
template <class F, bool kStochastic>
QCCL_HD uint32_t minifloatCode(float t, uint32_t random) {
  return encodeRne<F>(kStochastic ? minifloatStochasticValue<F>(t, random) : t);
}

// Symmetric integers: round to nearest, ties to even (adding 1.5 * 2^23 leaves the integer in the
// low mantissa bits, |t| <= 2^22), clamped to +-(2^(bits-1) - 1); the two's complement code in the
// low bits of the byte.
template <int kBits, bool kStochastic>
QCCL_HD uint32_t intCode(float t, uint32_t random) {
  constexpr int kMax = (1 << (kBits - 1)) - 1;
  if (kStochastic) t = stochasticRound(t, 0, random);
  const int32_t q = int32_t(floatBits(t + 12582912.0f) - 0x4B400000u);
  return uint8_t(q > kMax ? kMax : (q < -kMax ? -kMax : q));
}

// The value of the kBits-bit two's complement code at bits [shift, shift + kBits) of `bits`
// (the bits above it are ignored), sign-extended.
template <int kBits>
QCCL_HD float intValue(uint32_t bits, int shift = 0) {
  return float(int32_t(bits << (32 - kBits - shift)) >> (32 - kBits));
}

// int2: four levels (q + 1/2) * s for q in {-2, -1, 0, 1}, no zero (the least-squares 2-bit
// quantizer of symmetric data has none). The level nearest t = x / d is floor(t) + 1/2 (an
// integer t, a tie, goes up), so q = floor(clamp(t, -2, 1)); clamping first also turns NaN into
// -2 without an undefined conversion. The code is q's two bits, two's complement.
constexpr float kInt2Max = 1.5f;  // the largest level in units of s: s = amax / 1.5

QCCL_HD uint32_t int2Code(float t) {
  const float clamped = t > -2.0f ? (t < 1.0f ? t : 1.0f) : -2.0f;
#if defined(__CUDA_ARCH__)
  const float q = floorf(clamped);
#else
  const float q = __builtin_floorf(clamped);
#endif
  return uint32_t(int32_t(q)) & 3u;
}

QCCL_HD float int2Value(uint32_t code, float scale) { return (intValue<2>(code) + 0.5f) * scale; }

QCCL_HD uint32_t signBit(float t) { return floatBits(t) >> 31; }

// sign1 decodes to +-scale.
QCCL_HD float signValue(uint32_t bit, float scale) {
  return bitsFloat(floatBits(scale) ^ (bit & 1u) << 31);
}

}  // namespace rules
}  // namespace QCCL_ISA
}  // namespace qccl
