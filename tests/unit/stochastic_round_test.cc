// Stochastic rounding as an fp32 step: results are one of the two neighbouring multiples of the
// quantum, and over equally spaced random words the mean is the input (to 2^-16 quantum).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "codecs/element/stochastic_round.h"

namespace qccl {
namespace {

template <class F>
double quantum(float v) {
  return std::ldexp(1.0, quantumExponent<F>(v));
}

template <class F>
void checkUnbiased(float v) {
  const double q = quantum<F>(v);
  const double down = std::floor(std::fabs(double(v)) / q) * q * (v < 0 ? -1 : 1);
  const double up = down + q * (v < 0 ? -1 : 1);
  double sum = 0;
  constexpr int kSteps = 1 << 16;
  for (uint32_t k = 0; k < kSteps; ++k) {
    const float r = stochasticRoundTo<F>(v, k << 16 | 0x8000u);
    ASSERT_TRUE(double(r) == down || double(r) == up) << v << " -> " << r;
    sum += r;
  }
  EXPECT_NEAR(sum / kSteps, double(v), q / kSteps + 1e-7 * std::fabs(double(v))) << v;
}

TEST(StochasticRound, UnbiasedE4M3) {
  for (float v : {0.3f, -1.7f, 100.1f, 447.0f, 0.001f, -0.0123f, 3.0e-5f, 1.0f})
    checkUnbiased<E4M3>(v);
}

TEST(StochasticRound, UnbiasedE2M1) {
  for (float v : {0.1f, 0.74f, -1.2f, 2.5f, -5.1f, 0.25f}) checkUnbiased<E2M1>(v);
}

TEST(StochasticRound, UnbiasedBf16AndFp16) {
  for (float v : {1.001f, -3.14159f, 1e-39f, 65000.5f}) checkUnbiased<Bf16>(v);
  for (float v : {1.001f, -3.14159f, 1e-6f, 60000.3f}) checkUnbiased<Fp16>(v);
}

TEST(StochasticRound, IntegerQuantum) {
  std::mt19937 rng(3);
  for (float v : {0.25f, -0.75f, 12.5f, -126.1f, 0.0f}) {
    for (int i = 0; i < 1000; ++i) {
      const float r = stochasticRound(v, 0, rng());
      ASSERT_TRUE(r == std::floor(v) || r == std::ceil(v)) << v << " -> " << r;
    }
  }
}

TEST(StochasticRound, RepresentableAndSpecialValuesPassThrough) {
  for (float v : {1.5f, -448.0f, 0.0f, -0.0f, INFINITY, -INFINITY}) {
    for (uint32_t r : {0u, 0x80000000u, 0xffffffffu}) {
      const float got = stochasticRoundTo<E4M3>(v, r);
      EXPECT_EQ(floatBits(got), floatBits(v)) << v;
    }
  }
  EXPECT_TRUE(std::isnan(stochasticRoundTo<E4M3>(NAN, 123)));
}

TEST(StochasticRound, ExtremeRandomWords) {
  // Word 0 truncates; word 2^32 - 1 rounds up anything not already representable.
  EXPECT_EQ(stochasticRoundTo<E4M3>(1.01f, 0), 1.0f);
  EXPECT_EQ(stochasticRoundTo<E4M3>(1.01f, 0xffffffffu), 1.125f);
  EXPECT_EQ(stochasticRoundTo<E4M3>(-1.01f, 0xffffffffu), -1.125f);
  // Below the smallest E4M3 subnormal (2^-9) the result is 0 or 2^-9.
  EXPECT_EQ(stochasticRoundTo<E4M3>(1e-4f, 0), 0.0f);
  EXPECT_EQ(stochasticRoundTo<E4M3>(1e-4f, 0xffffffffu), std::ldexp(1.0f, -9));
}

// The definition (docs/CODECS.md) in double arithmetic, where every step is exact: |v| / 2^q
// splits into whole quanta and a fraction, whose first 32 bits plus the random word carry into
// one more quantum.
double referenceStochasticRound(float v, int q, uint32_t random) {
  const double scaled = std::ldexp(std::fabs(double(v)), -q);
  const double whole = std::floor(scaled);
  const double fraction32 = std::floor(std::ldexp(scaled - whole, 32));
  const double rounded = whole + (fraction32 + random >= 4294967296.0 ? 1 : 0);
  return std::copysign(std::ldexp(rounded, q), double(v));
}

TEST(StochasticRound, MatchesTheDefinitionOnRandomBitPatterns) {
  // Every finite fp32 (subnormals included) against every quantum exponent a format can ask
  // for: below fp32's last bit, inside the significand, above the value.
  std::mt19937_64 rng(17);
  for (int i = 0; i < 2000000; ++i) {
    const uint64_t bits = rng();
    const float v = bitsFloat(uint32_t(bits));
    if (!std::isfinite(v)) continue;
    const int q = int(rng() % 298) - 170;  // up to 127: 2^q an fp32
    const uint32_t random = i % 8 == 0 ? 0u : (i % 8 == 1 ? ~0u : uint32_t(bits >> 32));
    const double want = referenceStochasticRound(v, q, random);
    const float got = stochasticRound(v, q, random);
    if (std::fabs(want) > double(std::numeric_limits<float>::max())) {
      ASSERT_TRUE(std::isinf(got)) << v << " q " << q;  // 2^128: the caller saturates it
      continue;
    }
    ASSERT_EQ(double(got), want) << std::hexfloat << v << " q " << q << " random " << random;
    ASSERT_EQ(std::signbit(got), std::signbit(v)) << std::hexfloat << v;
  }
}

}  // namespace
}  // namespace qccl
