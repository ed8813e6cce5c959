// The Walsh-Hadamard butterflies of element/hadamard.h, eight lanes at a time with GCC's generic
// vectors (any target: SSE2 splits them, AVX2 and AVX-512 use them whole). Every output is the
// same sum or difference of the same two inputs, stage by stage, as the scalar definition, so the
// bits are identical (tests/unit/hadamard_test.cc).
//
// Stages with h >= 8 pair whole vectors. Stages h = 1, 2, 4 pair lanes inside a vector: with s
// the vector with partners swapped, lane j (the first of its pair) takes x + s = a + b and its
// partner takes s - x = a - b.
#pragma once

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

// walshHadamard(x, size) for size a multiple of 8 (every +rht size is). Eight-float vectors are
// one register from AVX on; below that (the portable target) the scalar loops are faster.
inline void walshHadamardVectors(float* x, int size) {
#if defined(__AVX__)
  for (int i = 0; i < size; i += 8) storeFloat8(x + i, hadamardWithinVector(loadFloat8(x + i)));
  for (int h = 8; h < size; h *= 2) {
    for (int i = 0; i < size; i += 2 * h) {
      for (int j = i; j < i + h; j += 8) {
        const Float8 a = loadFloat8(x + j), b = loadFloat8(x + j + h);
        storeFloat8(x + j, a + b);
        storeFloat8(x + j + h, a - b);
      }
    }
  }
#else
  walshHadamard(x, size);
#endif
}

inline void rhtForwardVectors(float* x, int size, const RhtSigns& signs) {
  rhtForward(x, size, signs, walshHadamardVectors);
}

inline void rhtInverseVectors(float* x, int size, const RhtSigns& signs) {
  rhtInverse(x, size, signs, walshHadamardVectors);
}

}  // namespace QCCL_ISA
}  // namespace qccl
