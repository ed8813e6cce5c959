// Stochastic rounding at the codec level: reproducible for the same (seed, rank, call, offset),
// different for other keys, and unbiased: the mean of many encodes approaches the input.
#include <gtest/gtest.h>

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

INSTANTIATE_TEST_SUITE_P(Codecs, Stochastic,
                         ::testing::Values("bf16+sr", "fp16+sr", "fp8e4m3+sr", "fp8e5m2+sr",
                                           "mxfp8+sr", "mxfp4+sr", "nvfp4+sr", "fp4ue5m3+sr",
                                           "int8+sr", "int4+sr"),
                         SpecName());

}  // namespace
}  // namespace qccl::test
