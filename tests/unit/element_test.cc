// Element formats against the independent reference (reference_formats.h): every code decodes to
// its documented value, and float -> code rounds to nearest even with saturation on millions of
// random, edge-case and tie inputs.
#include <gtest/gtest.h>

#include <random>

#include "codecs/element/e8m0.h"
#include "codecs/element/minifloat.h"
#include "tests/unit/reference_formats.h"

namespace qccl::test {
namespace {

const FormatRef& ref(const std::string& name) {
  for (const FormatRef& f : referenceFormats()) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no reference format " + name);
}

uint32_t bitsOf(float f) { return floatBits(f); }

// Inputs that exercise a format: random bit patterns (NaN, Inf, subnormals included), random
// values in and around its range, and every midpoint between neighbours with its two fp32
// neighbours (the ties and the values just off them).
std::vector<float> probeInputs(const FormatRef& fmt, size_t randomCount) {
  std::mt19937_64 rng(0x5eed + fmt.magBits());
  std::vector<float> in;
  for (size_t i = 0; i < randomCount; ++i) in.push_back(bitsFloat(uint32_t(rng())));
  const std::vector<double> mags = fmt.magnitudes();
  const int lo = -fmt.bias - fmt.manBits - 3, hi = int(std::log2(mags.back())) + 3;
  std::uniform_int_distribution<int> exp(lo, hi);
  for (size_t i = 0; i < randomCount; ++i) {
    const float m = 1.0f + float(rng() % (1u << 23)) / float(1u << 23);
    in.push_back(std::ldexp(m, exp(rng)) * ((rng() & 1) ? -1.0f : 1.0f));
  }
  for (size_t k = 0; k + 1 < mags.size(); ++k) {
    const float mid = float((mags[k] + mags[k + 1]) / 2);
    for (float v : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      in.push_back(v);
      in.push_back(-v);
    }
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 3.4028235e38f, 1e-45f}) {
    in.push_back(v);
  }
  return in;
}

template <class F>
void checkFormat(const FormatRef& fmt) {
  const std::vector<double> mags = fmt.magnitudes();
  ASSERT_DOUBLE_EQ(double(maxValue<F>()), mags.back()) << fmt.name;
  for (uint32_t code = 0; code < fmt.codeCount(); ++code) {
    const double want = fmt.value(code);
    const float got = decode<F>(code);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << fmt.name << " code " << code;
      continue;
    }
    ASSERT_EQ(double(got), want) << fmt.name << " code " << code;
    ASSERT_EQ(std::signbit(got), std::signbit(want)) << fmt.name << " code " << code;
    // Infinity saturates in formats that do not keep it.
    if (!std::isinf(want) || fmt.keepsInf) {
      ASSERT_EQ(encodeRne<F>(got), code) << fmt.name << " round trip of code " << code;
    }
  }
  for (float x : probeInputs(fmt, 1 << 20)) {
    ASSERT_EQ(encodeRne<F>(x), fmt.encode(x, mags))
        << fmt.name << " input " << x << " (0x" << std::hex << bitsOf(x) << ")";
  }
}

TEST(Element, E4M3) { checkFormat<E4M3>(ref("E4M3")); }
TEST(Element, E5M2) { checkFormat<E5M2>(ref("E5M2")); }
TEST(Element, E2M1) { checkFormat<E2M1>(ref("E2M1")); }
TEST(Element, UE5M3) { checkFormat<UE5M3>(ref("UE5M3")); }
TEST(Element, Fp16) { checkFormat<Fp16>(ref("FP16")); }
TEST(Element, Bf16) { checkFormat<Bf16>(ref("BF16")); }

TEST(Element, UE5M3PinnedValues) {
  // docs/CODECS.md pins UE5M3: bias 15, subnormals m/8 * 2^-14, only 0xFF is NaN.
  EXPECT_EQ(decode<UE5M3>(0x01), std::ldexp(1.0f, -17));  // smallest subnormal
  EXPECT_EQ(decode<UE5M3>(0x08), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(decode<UE5M3>(0xFE), 114688.0f);              // 1.75 * 2^16, the largest value
  EXPECT_EQ(decode<UE5M3>(0xF8), 65536.0f);               // exponent field 31 is finite
  EXPECT_TRUE(std::isnan(decode<UE5M3>(0xFF)));
  EXPECT_EQ(encodeRne<UE5M3>(-1.0f), 0u);  // unsigned: negative clamps to zero
  EXPECT_EQ(encodeRne<UE5M3>(1e9f), 0xFEu);
}

TEST(Element, E8M0EveryCode) {
  for (uint32_t code = 0; code < 255; ++code) {
    ASSERT_EQ(decodeE8M0(code), float(std::ldexp(1.0, int(code) - 127))) << code;
  }
  EXPECT_TRUE(std::isnan(decodeE8M0(0xFF)));
}

// The MX rule against its definition: the smallest e with amax <= elemMax * 2^e, clamped.
uint32_t referenceMxCode(float amax, float elemMax) {
  if (amax == 0.0f) return 0;
  int e = int(std::floor(std::log2(double(amax) / elemMax))) - 2;
  while (double(amax) > std::ldexp(double(elemMax), e)) ++e;
  return uint32_t(std::clamp(e, -127, 127) + 127);
}

TEST(Element, MxScaleCode) {
  std::mt19937 rng(7);
  for (float elemMax : {448.0f, 6.0f}) {
    std::vector<float> amaxes = {0.0f, 1e-45f, 1e-40f, 3.4028235e38f};
    for (int e = -140; e < 128; ++e) {  // exact powers of two times elemMax, and neighbours
      const float v = std::ldexp(elemMax, e);
      for (float w : {v, std::nextafter(v, 0.0f), std::nextafter(v, INFINITY)}) {
        if (std::isfinite(w)) amaxes.push_back(w);
      }
    }
    for (int i = 0; i < 1000000; ++i) {
      const float v = bitsFloat(rng() & 0x7fffffffu);
      if (std::isfinite(v)) amaxes.push_back(v);
    }
    for (float a : amaxes) {
      ASSERT_EQ(mxScaleCode(a, elemMax), referenceMxCode(a, elemMax)) << a << " / " << elemMax;
    }
  }
}

}  // namespace
}  // namespace qccl::test
