// Philox4x32-10 (element/philox.h) for many consecutive counters at once. The scalar function
// keeps a block's four words in one struct; here the words of kLanes blocks sit in four vectors,
// and each round's two 32x32->64-bit multiplies are vpmuludq on the even lanes and on the odd
// lanes shifted down, high and low halves blended back into 32-bit lanes. Compilers do not find
// that form themselves: they widen every lane to 64 bits and spend the round on shuffles. Same
// rounds, same bits (tests/unit/kernel_targets_test.cc checks every target against the portable
// one, which runs the scalar function).
#pragma once

#include <cstddef>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "codecs/cpu/lanes.h"
#include "codecs/element/philox.h"

namespace qccl {
inline namespace QCCL_ISA {

#if defined(__AVX512F__)
// (hi, lo) = the 64-bit products m * c, lane by lane.
QCCL_HD void philoxMultiply(UintLanes c, UintLanes m, UintLanes& hi, UintLanes& lo) {
  const __m512i even = _mm512_mul_epu32(__m512i(c), __m512i(m));
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(__m512i(c), 32), __m512i(m));
  hi = UintLanes(_mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd));
  lo = UintLanes(_mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32)));
}
#elif defined(__AVX2__)
QCCL_HD void philoxMultiply(UintLanes c, UintLanes m, UintLanes& hi, UintLanes& lo) {
  const __m256i even = _mm256_mul_epu32(__m256i(c), __m256i(m));
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(__m256i(c), 32), __m256i(m));
  hi = UintLanes(_mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA));
  lo = UintLanes(_mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA));
}
#endif

// bits[4 g + w] = word w of stochasticRoundingBlock(seed, rank, call, group0 + g), g < groups.
inline void stochasticRoundingBlocks(uint64_t seed, uint32_t rank, uint32_t call, uint64_t group0,
                                     size_t groups, uint32_t* bits) {
  size_t g = 0;
#if defined(__AVX2__)
  // kBatches vectors of blocks per step: the rounds are a chain of dependent multiplies, and
  // independent chains side by side keep the multiplier busy.
  constexpr size_t kLanes = sizeof(UintLanes) / 4, kBatches = 4, kStep = kLanes * kBatches;
  const UintLanes mul0 = UintLanes{} + kPhiloxMul0, mul1 = UintLanes{} + kPhiloxMul1;
  for (; g + kStep <= groups; g += kStep) {
    uint32_t words[4][kStep];
    for (size_t l = 0; l < kStep; ++l) {
      words[0][l] = uint32_t(group0 + g + l);
      words[1][l] = uint32_t((group0 + g + l) >> 32);
    }
    UintLanes c0[kBatches], c1[kBatches], c2[kBatches], c3[kBatches];
    for (size_t b = 0; b < kBatches; ++b) {
      std::memcpy(&c0[b], words[0] + b * kLanes, sizeof c0[b]);
      std::memcpy(&c1[b], words[1] + b * kLanes, sizeof c1[b]);
      c2[b] = UintLanes{} + rank;
      c3[b] = UintLanes{} + call;
    }
    uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
    for (int round = 0; round < 10; ++round) {  // philox4x32_10's round on every lane
      for (size_t b = 0; b < kBatches; ++b) {
        UintLanes hi0, lo0, hi1, lo1;
        philoxMultiply(c0[b], mul0, hi0, lo0);
        philoxMultiply(c2[b], mul1, hi1, lo1);
        c0[b] = hi1 ^ c1[b] ^ k0;
        c1[b] = lo1;
        c2[b] = hi0 ^ c3[b] ^ k1;
        c3[b] = lo0;
      }
      k0 += kPhiloxWeyl0;
      k1 += kPhiloxWeyl1;
    }
    for (size_t b = 0; b < kBatches; ++b) {
      std::memcpy(words[0] + b * kLanes, &c0[b], sizeof c0[b]);
      std::memcpy(words[1] + b * kLanes, &c1[b], sizeof c1[b]);
      std::memcpy(words[2] + b * kLanes, &c2[b], sizeof c2[b]);
      std::memcpy(words[3] + b * kLanes, &c3[b], sizeof c3[b]);
    }
    for (size_t l = 0; l < kStep; ++l) {
      for (int w = 0; w < 4; ++w) bits[4 * (g + l) + w] = words[w][l];
    }
  }
#endif
  for (; g < groups; ++g) {
    const PhiloxBlock b = stochasticRoundingBlock(seed, rank, call, group0 + g);
    for (int w = 0; w < 4; ++w) bits[4 * g + w] = b.v[w];
  }
}

}  // namespace QCCL_ISA
}  // namespace qccl
