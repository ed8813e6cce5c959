// 4-bit codes to floats through a 16-entry table, eight at a time (AVX2: two permutes and a blend
// on bit 3 of the code; AVX-512: one two-table permute). The scalar lookup compiles to
// one load and one store per element. Same table, same product: the bits are identical to the
// scalar loop's (tests/unit/kernel_targets_test.cc compares every target with the portable one).
#pragma once

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "codecs/cpu/vec8.h"

namespace qccl {
inline namespace QCCL_ISA {

#if defined(__AVX2__)
// table[code] lane by lane, for codes in [0, 16) and the table's halves in low and high.
QCCL_HD Float8 lookup16(Float8 low, Float8 high, Int8 codes) {
#if defined(__AVX512VL__)
  return Float8(_mm256_permutex2var_ps(__m256(low), __m256i(codes), __m256(high)));
#else
  const __m256 fromLow = _mm256_permutevar8x32_ps(__m256(low), __m256i(codes));
  const __m256 fromHigh = _mm256_permutevar8x32_ps(__m256(high), __m256i(codes));
  return Float8(_mm256_blendv_ps(fromLow, fromHigh, __m256(codes << 28)));  // sign = bit 3
#endif
}
#endif

// out[i] = table[code i] * factor for the n codes packed two per byte at in (low nibble first);
// returns how many it wrote (a multiple of 8; the caller finishes the rest).
inline size_t decodeNibblesVectors(const uint8_t* in, size_t n, const float* table, float factor,
                                   float* out) {
#if defined(__AVX2__)
  const Float8 low = loadFloat8(table), high = loadFloat8(table + 8);
  const Float8 factors = {factor, factor, factor, factor, factor, factor, factor, factor};
  // Code k of a little-endian 32-bit word of four bytes is its nibble k.
  const UInt8 shifts = {0, 4, 8, 12, 16, 20, 24, 28};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32_t word;
    std::memcpy(&word, in + i / 2, 4);
    const UInt8 words = {word, word, word, word, word, word, word, word};
    const Int8 codes = Int8((words >> shifts) & 15u);
    storeFloat8(out + i, lookup16(low, high, codes) * factors);
  }
  return i;
#else
  (void)in, (void)n, (void)table, (void)factor, (void)out;
  return 0;
#endif
}

}  // namespace QCCL_ISA
}  // namespace qccl
