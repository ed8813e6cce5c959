// The randomized Hadamard transform of "+rht": each run of R elements (R a power of two, 16..256)
// is multiplied by H_R * diag(s) / sqrt(R), H_R the Sylvester Hadamard matrix and s a +-1
// vector drawn from Philox(seed). The butterfly order below is part of the definition: any
// implementation that performs the same butterflies gets the same bits.
#pragma once

#include "codecs/element/host_device.h"
#include "codecs/element/philox.h"

namespace qccl {
inline namespace QCCL_ISA {

constexpr int kRhtMinSize = 16;
constexpr int kRhtMaxSize = 256;
constexpr int kRhtDefaultSize = 64;
constexpr int kRhtSignWords = kRhtMaxSize / 32;
constexpr uint32_t kRhtCounterTag = 0x52485400u;  // "RHT\0": keeps apart from the SR stream

struct RhtSigns {
  uint32_t words[kRhtSignWords];  // bit j%32 of word j/32 set: s_j = -1
};

QCCL_HD RhtSigns rhtSigns(uint64_t seed) {
  RhtSigns s{};
  for (int b = 0; b < kRhtSignWords / 4; ++b) {
    const PhiloxBlock r = philox4x32_10(PhiloxBlock{{uint32_t(b), 0u, 0u, kRhtCounterTag}},
                                        uint32_t(seed), uint32_t(seed >> 32));
    for (int w = 0; w < 4; ++w) s.words[4 * b + w] = r.v[w];
  }
  return s;
}

// fp32 nearest to 1/sqrt(R): a power of two for even log2(R), else fp32(sqrt 2) * 2^-k.
QCCL_HD float rhtNorm(int size) {
  int log2Size = 0;
  while ((1 << log2Size) < size) ++log2Size;
  const float kSqrt2 = bitsFloat(0x3FB504F3u);
  return log2Size % 2 == 0 ? exp2Int(-log2Size / 2) : kSqrt2 * exp2Int(-(log2Size + 1) / 2);
}

QCCL_HD void applySigns(float* x, int size, const RhtSigns& signs) {
  for (int j = 0; j < size; ++j) {
    const uint32_t flip = ((signs.words[j >> 5] >> (j & 31)) & 1u) << 31;
    x[j] = bitsFloat(floatBits(x[j]) ^ flip);
  }
}

// In-place unnormalised Walsh-Hadamard transform, stages h = 1, 2, 4, ...
QCCL_HD void walshHadamard(float* x, int size) {
  for (int h = 1; h < size; h *= 2) {
    for (int i = 0; i < size; i += 2 * h) {
      for (int j = i; j < i + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
    }
  }
}

QCCL_HD void scaleBy(float* x, int size, float factor) {
  for (int j = 0; j < size; ++j) x[j] *= factor;
}

// x <- H diag(s) x / sqrt(R). butterflies(x, R) is walshHadamard or a faster equivalent.
template <class Butterflies>
QCCL_HD void rhtForward(float* x, int size, const RhtSigns& signs, Butterflies butterflies) {
  applySigns(x, size, signs);
  butterflies(x, size);
  scaleBy(x, size, rhtNorm(size));
}

// x <- diag(s) H x / sqrt(R), the transpose and so the inverse of rhtForward.
template <class Butterflies>
QCCL_HD void rhtInverse(float* x, int size, const RhtSigns& signs, Butterflies butterflies) {
  butterflies(x, size);
  scaleBy(x, size, rhtNorm(size));
  applySigns(x, size, signs);
}

QCCL_HD void rhtForward(float* x, int size, const RhtSigns& signs) {
  rhtForward(x, size, signs, walshHadamard);
}

QCCL_HD void rhtInverse(float* x, int size, const RhtSigns& signs) {
  rhtInverse(x, size, signs, walshHadamard);
}

}  // namespace QCCL_ISA
}  // namespace qccl
