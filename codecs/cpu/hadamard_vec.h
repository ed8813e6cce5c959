// The randomized Hadamard transform of element/hadamard.h, eight lanes at a time with GCC's
// generic vectors (from AVX on). Every output is the same sum or difference of the same two
// inputs, stage by stage, as the scalar definition, so the bits are identical
// (tests/unit/kernel_targets_test.cc compares every target with the portable one, which runs the
// definition).
//
// Stages with h >= 8 pair whole vectors. Stages h = 1, 2, 4 pair lanes inside a vector: with s
// the vector with partners swapped, lane j (the first of its pair) takes x + s = a + b and its
// partner takes s - x = a - b.
#pragma once

#include <cstring>

#include "codecs/cpu/vec8.h"
#include "codecs/element/hadamard.h"

namespace qccl {
inline namespace QCCL_ISA {

#if defined(__AVX__)
// The in-vector stages h = 1, 2, 4 on one vector.
QCCL_HD Float8 hadamardWithinVector(Float8 x) {
  Float8 s = __builtin_shufflevector(x, x, 1, 0, 3, 2, 5, 4, 7, 6);
  x = __builtin_shufflevector(x + s, s - x, 0, 9, 2, 11, 4, 13, 6, 15);
  s = __builtin_shufflevector(x, x, 2, 3, 0, 1, 6, 7, 4, 5);
  x = __builtin_shufflevector(x + s, s - x, 0, 1, 10, 11, 4, 5, 14, 15);
  s = __builtin_shufflevector(x, x, 4, 5, 6, 7, 0, 1, 2, 3);
  return __builtin_shufflevector(x + s, s - x, 0, 1, 2, 3, 12, 13, 14, 15);
}

#endif

#if defined(__AVX__)
// The stages between whole vectors, h = 8, 16, ... elements apart, on a run held in registers.
template <int kVectors>
QCCL_HD void hadamardAcrossVectors(Float8* v) {
#pragma GCC unroll 8
  for (int h = 1; h < kVectors; h *= 2) {
#pragma GCC unroll 32
    for (int i = 0; i < kVectors; ++i) {
      if (i & h) continue;
      const Float8 a = v[i], b = v[i + h];
      v[i] = a + b;
      v[i + h] = a - b;
    }
  }
}
#endif

// A tile's rotation, prepared once per encode or decode: the signs as bit masks (a sign flip is
// an exclusive or of the sign bit, as applySigns does) and the norm, instead of picking sign bits
// out of words and recomputing 1/sqrt(R) for every run.
struct RhtRuns {
  int size = 0;  // 0: no rotation
  float norm = 1.0f;
  RhtSigns signs;
  uint32_t flips[kRhtMaxSize];
};

inline RhtRuns rhtRuns(int size, uint64_t seed) {
  RhtRuns runs;
  runs.size = size;
  if (size == 0) return runs;
  runs.signs = rhtSigns(seed);
  runs.norm = rhtNorm(size);
  for (int j = 0; j < size; ++j) {
    runs.flips[j] = ((runs.signs.words[j >> 5] >> (j & 31)) & 1u) << 31;
  }
  return runs;
}

// rhtForward / rhtInverse (element/hadamard.h) on each run of kSize elements of a tile of n: the
// same sign flips, butterflies and products in the same order, so the same bits. With the size a
// compile-time constant everything unrolls and a run stays in registers.
template <int kSize>
void rotateRuns(float* x, size_t n, const RhtRuns& runs, bool forward) {
#if defined(__AVX__)
  constexpr int kVectors = kSize / 8;
  Int8 flips[kVectors];
  for (int i = 0; i < kVectors; ++i) std::memcpy(&flips[i], runs.flips + 8 * i, sizeof flips[i]);
  const Float8 norm = Float8{} + runs.norm;
  for (size_t r = 0; r < n; r += kSize) {
    Float8 v[kVectors];
#pragma GCC unroll 32
    for (int i = 0; i < kVectors; ++i) {
      v[i] = loadFloat8(x + r + 8 * i);
      if (forward) v[i] = Float8(Int8(v[i]) ^ flips[i]);
      v[i] = hadamardWithinVector(v[i]);
    }
    hadamardAcrossVectors<kVectors>(v);
#pragma GCC unroll 32
    for (int i = 0; i < kVectors; ++i) {
      v[i] *= norm;
      if (!forward) v[i] = Float8(Int8(v[i]) ^ flips[i]);
      storeFloat8(x + r + 8 * i, v[i]);
    }
  }
#else  // the portable target: the definition itself
  for (size_t r = 0; r < n; r += kSize) {
    if (forward) {
      rhtForward(x + r, kSize, runs.signs);
    } else {
      rhtInverse(x + r, kSize, runs.signs);
    }
  }
#endif
}

// n is a multiple of the run length (tiles are).
inline void rotateTile(float* x, size_t n, const RhtRuns& runs, bool forward) {
  switch (runs.size) {
    case 16: return rotateRuns<16>(x, n, runs, forward);
    case 32: return rotateRuns<32>(x, n, runs, forward);
    case 64: return rotateRuns<64>(x, n, runs, forward);
    case 128: return rotateRuns<128>(x, n, runs, forward);
    default: return rotateRuns<256>(x, n, runs, forward);  // sizes are checked at parse: 16..256
  }
}

}  // namespace QCCL_ISA
}  // namespace qccl
