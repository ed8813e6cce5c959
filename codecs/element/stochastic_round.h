// Stochastic rounding as a step in fp32: the value is rounded to a multiple of the target's
// quantum 2^qexp by adding 32 uniform random bits below the quantum and truncating, so that
// E[result] = value (to 2^-32 of a quantum). The result is exactly representable in the target,
// so the round-to-nearest conversion that follows only saturates and packs.
#pragma once

#include "codecs/element/host_device.h"
#include "codecs/element/minifloat.h"

namespace qccl {
inline namespace QCCL_ISA {

// Rounds |v| down or up to a multiple of 2^qexp (qexp <= 127), keeping the sign. NaN and
// infinity pass through. Branch-free, in 32-bit lanes and with every shift count in [0, 31], so
// that encode loops vectorise into few instructions (no selects guarding the shifts).
QCCL_HD float stochasticRound(float v, int qexp, uint32_t random) {
  const uint32_t u = floatBits(v);
  const uint32_t a = u & kAbsMask;
  const uint32_t biasedExp = a >> 23;
  const uint32_t significand = (a & 0x7fffffu) | (biasedExp ? 0x800000u : 0u);  // < 2^24
  // Bits below the quantum: qexp less the weight of the significand's last bit.
  const int drop = qexp - (int(biasedExp ? biasedExp : 1) - 150);
  // The dropped bits as a 32-bit fraction of the quantum (truncated beyond 32 bits): shifted up
  // when fewer than 32 are dropped (the kept bits fall off the top), down otherwise (a shift by
  // 31 leaves nothing of a 24-bit significand, as any longer one would).
  const uint32_t fraction = drop < 32 ? significand << (32 - (drop < 1 ? 32 : drop))
                                      : significand >> (drop - 32 < 31 ? drop - 32 : 31);
  const uint32_t carry = drop > 0 && random > ~fraction ? 1u : 0u;  // fraction + random overflows
  const uint32_t keptShift = drop > 0 && drop <= 23 ? uint32_t(drop) : 0u;
  const uint32_t truncated = ((a >> keptShift) << keptShift) + (carry << keptShift);
  // |v| below the quantum (drop > 23, so qexp >= -125 and 2^qexp is normal): 0 or one quantum.
  const uint32_t quantum = uint32_t(qexp + 127) << 23;
  const uint32_t rounded = drop > 23 ? (carry ? quantum : 0u) : truncated;
  return bitsFloat((a >= kInfBits ? a : rounded) | (u & 0x80000000u));
}

// The quantum exponent of format F at value v: its last mantissa bit's weight, which is fixed
// below the normal range.
template <class F>
QCCL_HD int quantumExponent(float v) {
  const int biasedExp = int((floatBits(v) & kAbsMask) >> 23);
  const int exp = biasedExp - 127;
  return (exp > F::kMinExp ? exp : F::kMinExp) - F::kManBits;
}

template <class F>
QCCL_HD float stochasticRoundTo(float v, uint32_t random) {
  return stochasticRound(v, quantumExponent<F>(v), random);
}

}  // namespace QCCL_ISA
}  // namespace qccl
