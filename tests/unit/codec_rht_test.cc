// +rht: round trips (RoundTrip covers the bound) and lowers the error on inputs with outliers
// for the formats whose elements are uniform or whose scale is coarse (int8, int4, mxfp4): the
// rotation spreads an outlier's magnitude across its run, so the block scale stops being set by
// one element. Formats with floating-point elements under a fine scale (fp8, nvfp4) gain
// nothing in L2 from it; docs/CODECS.md has the measured table.
#include <gtest/gtest.h>

#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

// Gaussian with one +-10 sigma outlier in every 64 elements.
std::vector<float> withOutliers(size_t n, uint32_t seed) {
  std::vector<float> x = gaussian(n, seed);
  std::mt19937 rng(seed);
  for (size_t i = 0; i + 64 <= n; i += 64) x[i + rng() % 64] = (rng() & 1) ? 10.0f : -10.0f;
  return x;
}

class RhtOutliers : public ::testing::TestWithParam<std::string> {};

TEST_P(RhtOutliers, LowersError) {
  const CodecSpec plain = codec::parseCodecSpec(GetParam());
  std::string rotatedSpec = GetParam();
  rotatedSpec.insert(rotatedSpec.find_first_of("/") == std::string::npos ? rotatedSpec.size()
                                                                         : rotatedSpec.find('/'),
                     "+rht");
  const CodecSpec rotated = codec::parseCodecSpec(rotatedSpec);
  const size_t n = 1 << 16;
  const std::vector<float> x = withOutliers(n, 5);
  const double errPlain = l2Diff(x, decodeVec(plain, encodeVec(plain, x), n)) / l2(x);
  const double errRotated = l2Diff(x, decodeVec(rotated, encodeVec(rotated, x), n)) / l2(x);
  EXPECT_LT(errRotated, 0.8 * errPlain) << GetParam() << ": " << errPlain << " -> " << errRotated;
}

INSTANTIATE_TEST_SUITE_P(Codecs, RhtOutliers,
                         ::testing::Values("mxfp4", "int8", "int4", "int4/b32", "int2"));

TEST(Rht, SameSeedSameBytesOtherSeedOtherBytes) {
  const CodecSpec spec = codec::parseCodecSpec("nvfp4+rht");
  const std::vector<float> x = gaussian(1000, 3);
  codec::EncodeParams a, b;
  a.seed = b.seed = 42;
  EXPECT_EQ(encodeVec(spec, x, a), encodeVec(spec, x, b));
  b.seed = 43;
  EXPECT_NE(encodeVec(spec, x, a), encodeVec(spec, x, b));
  // The decoder takes the seed from the chunk header.
  EXPECT_LT(l2Diff(x, decodeVec(spec, encodeVec(spec, x, b), x.size())), 0.2 * l2(x));
}

}  // namespace
}  // namespace qccl::test
