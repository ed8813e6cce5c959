// 4-bit codes to floats through a 16-entry table, eight at a time with GCC's generic vectors
// (AVX2: two permutes and a blend; AVX-512: one two-table permute). The scalar lookup compiles to
// one load and one store per element. Same table, same product: the bits are identical to the
// scalar loop's (tests/unit/kernel_targets_test.cc compares every target with the portable one).
#pragma once

#include <cstring>

namespace qccl {
inline namespace QCCL_ISA {

// out[i] = table[code i] * factor for the n codes packed two per byte at in (low nibble first);
// returns how many it wrote (a multiple of 8; the caller finishes the rest).
inline size_t decodeNibblesVectors(const uint8_t* in, size_t n, const float* table, float factor,
                                   float* out) {
#if defined(__AVX2__)
  typedef float Float8 __attribute__((vector_size(32)));
  typedef int Int8 __attribute__((vector_size(32)));
  typedef unsigned UInt8 __attribute__((vector_size(32)));
  Float8 low, high;
  std::memcpy(&low, table, sizeof low);
  std::memcpy(&high, table + 8, sizeof high);
  const Float8 factors = {factor, factor, factor, factor, factor, factor, factor, factor};
  // Code k of a little-endian 32-bit word of four bytes is its nibble k.
  const UInt8 shifts = {0, 4, 8, 12, 16, 20, 24, 28};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32_t word;
    std::memcpy(&word, in + i / 2, 4);
    const UInt8 words = {word, word, word, word, word, word, word, word};
    const Int8 codes = Int8((words >> shifts) & 15u);
    const Float8 values = __builtin_shuffle(low, high, codes) * factors;
    std::memcpy(out + i, &values, sizeof values);
  }
  return i;
#else
  (void)in, (void)n, (void)table, (void)factor, (void)out;
  return 0;
#endif
}

}  // namespace QCCL_ISA
}  // namespace qccl
