// Stochastic rounding (element/stochastic_round.h) of a whole tile, a vector of lanes at a time.
// The scalar function clamps its shift counts and guards them with selects, because C++ leaves
// shifts by 32 or more undefined; compiled per element that is some forty vector operations and
// spills every register AVX2 has. Here the variable shifts are vpsrlvd/vpsllvd, which give 0 for
// any count of 32 or more, and the three cases (nothing dropped, bits dropped below the quantum,
// the value below one quantum) fall out of that without clamps. Same bits as the scalar rounding
// (tests/unit/kernel_targets_test.cc compares every target with the portable one, on inputs that
// reach each case).
#pragma once

#include <cstddef>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "codecs/cpu/lanes.h"
#include "codecs/element/format_rules.h"

namespace qccl {
inline namespace QCCL_ISA {

// How a target format's quantum (the weight of its last mantissa bit at a value) follows from
// the value's biased fp32 exponent: qexp = max(biasedExp + kOffset, kFloor). value() is the
// scalar definition the vectors reproduce.
template <class F>
struct MinifloatRounding {
  static constexpr int kOffset = -127 - F::kManBits;
  static constexpr int kFloor = F::kMinExp - F::kManBits;
  static QCCL_HD float value(float t, uint32_t random) {
    return rules::minifloatStochasticValue<F>(t, random);
  }
};

// Integers: a fixed quantum of 1. Rounding to a multiple of 1 never carries a finite value to
// infinity, so the saturation the vectors share with the minifloats never applies.
struct IntegerRounding {
  static constexpr int kOffset = -(1 << 16);  // below kFloor for every exponent
  static constexpr int kFloor = 0;
  static QCCL_HD float value(float t, uint32_t random) { return stochasticRound(t, 0, random); }
};

#if defined(__AVX512F__)
QCCL_HD UintLanes shiftRightOrZero(UintLanes v, UintLanes count) {
  return UintLanes(_mm512_srlv_epi32(__m512i(v), __m512i(count)));
}
QCCL_HD UintLanes shiftLeftOrZero(UintLanes v, UintLanes count) {
  return UintLanes(_mm512_sllv_epi32(__m512i(v), __m512i(count)));
}
#elif defined(__AVX2__)
QCCL_HD UintLanes shiftRightOrZero(UintLanes v, UintLanes count) {
  return UintLanes(_mm256_srlv_epi32(__m256i(v), __m256i(count)));
}
QCCL_HD UintLanes shiftLeftOrZero(UintLanes v, UintLanes count) {
  return UintLanes(_mm256_sllv_epi32(__m256i(v), __m256i(count)));
}
#endif

#if defined(__AVX2__)
// stochasticRound(t, qexp, random) lane by lane, then a finite value carried to infinity
// saturated to the largest finite one (what minifloatStochasticValue does).
template <class Rule>
QCCL_HD UintLanes stochasticUintLanes(UintLanes u, UintLanes random) {
  const UintLanes a = u & kAbsMask;
  const IntLanes biasedExp = IntLanes(a >> 23);
  const IntLanes shifted = biasedExp + Rule::kOffset;
  const IntLanes qexp = shifted > Rule::kFloor ? shifted : IntLanes{} + Rule::kFloor;
  const UintLanes significand = (a & 0x7fffffu) | UintLanes((biasedExp != 0) & 0x800000);
  // Bits of the significand below the quantum; <= 0: none.
  const IntLanes drop = qexp + 150 - (biasedExp > 1 ? biasedExp : IntLanes{} + 1);
  // Up to 23 dropped bits: add the random bits' top `drop` bits to them and clear them; the carry
  // ripples into the exponent as the scalar form's carry does. drop <= 0 shifts by 32 or more:
  // nothing is added and nothing cleared.
  const UintLanes keepCount = UintLanes(32 - drop);
  const UintLanes dropped = shiftRightOrZero(UintLanes{} + ~0u, keepCount);
  const UintLanes withinRange = (a + shiftRightOrZero(random, keepCount)) & ~dropped;
  // Below one quantum: the value as a 32-bit fraction of it (one of the shifts is by 32 or more,
  // and gives 0), rounded up to the quantum when the random bits carry out of it.
  const UintLanes fraction =
      shiftLeftOrZero(significand, keepCount) | shiftRightOrZero(significand, UintLanes(drop - 32));
  const UintLanes quantum = UintLanes(qexp + 127) << 23;
  const UintLanes belowQuantum = UintLanes(random > ~fraction) & quantum;
  UintLanes rounded = drop > 23 ? belowQuantum : withinRange;
  rounded = a >= kInfBits ? a : rounded;
  rounded = ((rounded == kInfBits) & (a < kInfBits)) ? floatBits(rules::kFloatMax) : rounded;
  return rounded | (u & 0x80000000u);
}
#endif

// out[i] = Rule::value(t[i], random[i]) for i < n.
template <class Rule>
inline void stochasticRoundFloats(const float* t, size_t n, const uint32_t* random, float* out) {
  size_t i = 0;
#if defined(__AVX2__)
  constexpr size_t kLanes = sizeof(UintLanes) / 4;
  for (; i + kLanes <= n; i += kLanes) {
    UintLanes u, r;
    std::memcpy(&u, t + i, sizeof u);
    std::memcpy(&r, random + i, sizeof r);
    u = stochasticUintLanes<Rule>(u, r);
    std::memcpy(out + i, &u, sizeof u);
  }
#endif
  for (; i < n; ++i) out[i] = Rule::value(t[i], random[i]);
}

}  // namespace QCCL_ISA
}  // namespace qccl
