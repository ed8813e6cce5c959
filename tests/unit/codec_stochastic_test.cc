// Stochastic rounding at the codec level: reproducible for the same (seed, rank, call, offset),
// different for other keys, and unbiased: the mean of many encodes approaches the input.
#include <gtest/gtest.h>

#include <cmath>

#include "codecs/element/minifloat.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

class Stochastic : public ::testing::TestWithParam<std::string> {};

TEST_P(Stochastic, ReproducibleForTheSameKey) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  const std::vector<float> x = gaussian(3001, 4);
  codec::EncodeParams p;
  p.seed = 77;
  p.rank = 2;
  p.call = 9;
  EXPECT_EQ(encodeVec(spec, x, p), encodeVec(spec, x, p));
  for (auto change :
       {+[](codec::EncodeParams& q) { q.seed++; }, +[](codec::EncodeParams& q) { q.rank++; },
        +[](codec::EncodeParams& q) { q.call++; },
        +[](codec::EncodeParams& q) { q.offset += 1; }}) {
    codec::EncodeParams other = p;
    change(other);
    EXPECT_NE(encodeVec(spec, x, p), encodeVec(spec, x, other));
  }
}

TEST_P(Stochastic, MeanOfManyEncodesApproachesInput) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  const size_t n = 2048;
  const std::vector<float> x = gaussian(n, 8);
  constexpr int kDraws = 400;
  std::vector<double> mean(n, 0.0);
  codec::EncodeParams p;
  for (int d = 0; d < kDraws; ++d) {
    p.call = uint32_t(d);
    const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, p), n);
    for (size_t i = 0; i < n; ++i) mean[i] += y[i] / double(kDraws);
  }
  // Each draw errs by at most b_i (one quantum) with mean zero: Var <= b_i^2 / 4 per draw, so
  // E|mean - x|^2 <= sum b_i^2 / (4 kDraws). Allow 4x that expectation.
  const std::vector<double> b = bounds(spec, quantizerDomain(spec, x, p.seed));
  double err2 = 0, allowed = 0;
  for (size_t i = 0; i < n; ++i) {
    err2 += (mean[i] - x[i]) * (mean[i] - x[i]);
    allowed += b[i] * b[i] / (4.0 * kDraws);
  }
  EXPECT_LE(err2, 4 * allowed) << GetParam();
  // And far below round-to-nearest's error on the same data.
  CodecSpec nearest = spec;
  nearest.stochastic = false;
  const double rne = l2Diff(x, decodeVec(nearest, encodeVec(nearest, x), n));
  EXPECT_LT(std::sqrt(err2), 0.25 * rne) << GetParam();
}

// bf16 and fp16 keep infinity, but finite values saturate (docs/CODECS.md), also when stochastic
// rounding rounds up past fp32's largest value: the case an outside oracle found, fp32 0x7f7fffff
// under bf16+sr at seed 0, rank 0, call 0, offset 0, gave +inf (0x7f80) instead of 0x7f7f; and
// fp16+sr of -3.4028235e38 gave -inf instead of -65504.
TEST(StochasticSaturation, FiniteExtremesNeverBecomeInfinity) {
  const float kMax = 3.40282347e38f;
  std::vector<float> x;
  for (int i = 0; i < 4096; ++i) {
    x.push_back(i % 2 ? -kMax : kMax);
    x.push_back((i % 2 ? 1.0f : -1.0f) * std::nextafter(kMax, 0.0f));
    x.push_back(65504.0f + float(i));  // just above fp16's largest: saturates, never infinity
  }
  for (const char* text : {"bf16+sr", "fp16+sr"}) {
    const CodecSpec spec = codec::parseCodecSpec(text);
    codec::EncodeParams p;  // seed 0, rank 0, call 0, offset 0: the oracle's case first
    const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, p), x.size());
    const float largest = std::string(text) == "bf16+sr" ? qccl::decode<Bf16>(0x7f7f) : 65504.0f;
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(std::isfinite(y[i])) << text << ": " << x[i] << " became " << y[i];
      ASSERT_LE(std::fabs(y[i]), largest) << text;
    }
    EXPECT_EQ(y[0], largest) << text << ": the oracle's case saturates to the largest value";
  }
  std::vector<float> one{-kMax};
  EXPECT_EQ(decodeVec(codec::parseCodecSpec("fp16+sr"),
                      encodeVec(codec::parseCodecSpec("fp16+sr"), one, {}), 1)[0],
            -65504.0f);
}

INSTANTIATE_TEST_SUITE_P(Codecs, Stochastic,
                         ::testing::Values("bf16+sr", "fp16+sr", "fp8e4m3+sr", "fp8e5m2+sr",
                                           "mxfp8+sr", "mxfp4+sr", "nvfp4+sr", "fp4ue5m3+sr",
                                           "int8+sr", "int4+sr"),
                         SpecName());

}  // namespace
}  // namespace qccl::test
