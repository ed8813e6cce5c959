// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator, so the CPU and the GPU draw identical bits for the same
// (key, counter) without sharing state.
#pragma once

#include "codecs/element/host_device.h"

namespace qccl {
inline namespace QCCL_ISA {

struct PhiloxBlock {
  uint32_t v[4];
};

constexpr uint32_t kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u, kPhiloxWeyl1 = 0xBB67AE85u;

QCCL_HD PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kPhiloxMul0) * ctr.v[0];
    const uint64_t p1 = uint64_t(kPhiloxMul1) * ctr.v[2];
    ctr = PhiloxBlock{{uint32_t(p1 >> 32) ^ ctr.v[1] ^ k0, uint32_t(p1),
                       uint32_t(p0 >> 32) ^ ctr.v[3] ^ k1, uint32_t(p0)}};
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  return ctr;
}

// The 32 random bits that stochastic rounding adds to element `index` of a stream
// (docs/CODECS.md): word index % 4 of the block at counter (index / 4, rank, call).
QCCL_HD PhiloxBlock stochasticRoundingBlock(uint64_t seed, uint32_t rank, uint32_t call,
                                            uint64_t group) {
  return philox4x32_10(PhiloxBlock{{uint32_t(group), uint32_t(group >> 32), rank, call}},
                       uint32_t(seed), uint32_t(seed >> 32));
}

}  // namespace QCCL_ISA
}  // namespace qccl
