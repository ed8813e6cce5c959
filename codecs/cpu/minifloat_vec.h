// Minifloat codes of one byte and floats, a whole register at a time: 8-bit codes (fp8 e4m3,
// e5m2) to floats, and floats to the codes of those and of E2M1. encodeRne<F> and decode<F> work
// one element at a time, and what the compiler makes of their loops goes through byte compares and
// repacking, at half the speed of the int8 codec. Here the same steps run on whole registers:
// decoding moves a normal code's exponent and mantissa into fp32's fields and rebiases the
// exponent with one integer add, converts a subnormal's mantissa and scales it by its power of
// two, and selects the specials; encoding repeats encodeRne's integer rounding lane by lane.
// Bytes are widened and narrowed with the target's own instructions. Every step is exact or the
// same IEEE operation as the scalar one, so the bits are the scalar functions' (tests/unit/
// kernel_targets_test.cc: every code decoded, inputs of every binade encoded, on every target).
// The decoder never forms an fp32 subnormal, so flush-to-zero settings cannot change it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "codecs/cpu/lanes.h"
#include "codecs/element/minifloat.h"

namespace qccl {
inline namespace QCCL_ISA {

#if defined(__AVX2__)
// A register's worth of bytes, each zero-extended to a 32-bit lane (vpmovzxbd; GCC lowers the
// generic __builtin_convertvector of bytes to one extract and insert per lane).
inline UintLanes widenBytes(const uint8_t* in) {
#if defined(__AVX512F__)
  return UintLanes(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))));
#else
  return UintLanes(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in))));
#endif
}

// The low byte of each 32-bit lane, stored in lane order (values below 256).
inline void narrowToBytes(UintLanes lanes, uint8_t* out) {
#if defined(__AVX512F__)
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(__m512i(lanes)));
#else
  const __m256i v = __m256i(lanes);
  const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(words, words));
#endif
}
#endif

// out[i] = decode<F>(in[i]) * factor for the first codes, a register's worth at a time; returns
// how many it wrote (the caller finishes the rest).
template <class F>
size_t decodeMinifloat8Vectors(const uint8_t* in, size_t n, float factor, float* out) {
#if defined(__AVX2__)
  static_assert(F::kSigned && F::kMagBits + 1 == 8, "8-bit minifloats with a sign bit");
  constexpr size_t kLanes = sizeof(UintLanes) / sizeof(uint32_t);
  // A normal code's fields shifted into fp32's are off by the difference of the biases.
  constexpr uint32_t kRebias = uint32_t(127 - F::kBias) << 23;
  // A subnormal is its mantissa times the weight of its lowest bit.
  const float lsb = bitsFloat(uint32_t(1 - F::kBias - F::kManBits + 127) << 23);
  const size_t whole = n - n % kLanes;
  for (size_t i = 0; i < whole; i += kLanes) {
    const UintLanes code = widenBytes(in + i);
    const UintLanes mag = code & F::kMagMask, exp = mag >> F::kManBits;
    const UintLanes normal = (mag << (23 - F::kManBits)) + kRebias;
    const FloatLanes small = __builtin_convertvector(IntLanes(mag), FloatLanes) * lsb;
    UintLanes bits = exp == 0 ? UintLanes(small) : normal;
    if constexpr (F::kSpecials == Specials::Ieee) {
      bits = exp == F::kExpAllOnes ? (kInfBits | (mag & F::kManMask)) : bits;
    }
    if constexpr (F::kSpecials == Specials::NanOnly) {
      bits = mag == F::kMagMask ? UintLanes{} + 0x7fc00000u : bits;
    }
    const FloatLanes value = FloatLanes(bits | ((code >> F::kMagBits) << 31));
    const FloatLanes scaled = value * factor;
    std::memcpy(out + i, &scaled, sizeof scaled);
  }
  return whole;
#else
  (void)in, (void)n, (void)factor, (void)out;
  return 0;
#endif
}

// The codes of encodeRne<F> for the first of n values, a register's worth at a time, one code per
// byte (the 4-bit formats' codes are packed afterwards); returns how many it wrote. The same
// integer steps as encodeRne, lane by lane: the fp32 pattern rounded at the format's last
// mantissa bit, subnormals counted by the FPU's rounding of a scaled value, then saturation,
// sign and NaN.
template <class F>
size_t encodeMinifloatVectors(const float* in, size_t n, uint8_t* out) {
#if defined(__AVX2__)
  static_assert(F::kBias != 127 && !F::kKeepsInf && F::kMagBits + 1 <= 8, "codes of one byte");
  constexpr size_t kLanes = sizeof(UintLanes) / sizeof(uint32_t);
  constexpr int kShift = 23 - F::kManBits;
  constexpr uint32_t kRebias = uint32_t(127 - F::kBias) << F::kManBits;
  constexpr int32_t kMinNormalBits = int32_t(F::kMinExp + 127) << 23;
  const float toUnits = exp2Int(F::kManBits - F::kMinExp);
  const size_t whole = n - n % kLanes;
  for (size_t i = 0; i < whole; i += kLanes) {
    UintLanes u;
    std::memcpy(&u, in + i, sizeof u);
    const UintLanes a = u & kAbsMask;
    const UintLanes rounded = (a + ((1u << (kShift - 1)) - 1) + ((a >> kShift) & 1)) >> kShift;
    const FloatLanes units = FloatLanes(a) * toUnits + 8388608.0f;
    const UintLanes subnormal = UintLanes(units) - 0x4B000000u;
    // |x| bits are non-negative as signed lanes: signed compares, which AVX2 has.
    const IntLanes signedA = IntLanes(a);
    IntLanes code = IntLanes(signedA < kMinNormalBits ? subnormal : rounded - kRebias);
    code = code < int32_t(F::kMaxCode) ? code : int32_t(F::kMaxCode);
    if constexpr (F::kSigned) {
      code |= IntLanes((u >> 31) << F::kMagBits);
    } else {
      code = IntLanes(u >> 31) != 0 ? 0 : code;
    }
    code = signedA > int32_t(kInfBits) ? int32_t(F::kNanCode) : code;
    narrowToBytes(UintLanes(code), out + i);
  }
  return whole;
#else
  (void)in, (void)n, (void)out;
  return 0;
#endif
}

}  // namespace QCCL_ISA
}  // namespace qccl
