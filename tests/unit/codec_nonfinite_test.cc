// NaN and infinity: a block holding one decodes as non-finite for that whole block (so an AMP
// loss scaler still sees the overflow), the other blocks are unaffected, and error feedback
// leaves that block's residual untouched.
#include <gtest/gtest.h>

#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

class NonFinite : public ::testing::TestWithParam<std::string> {};

TEST_P(NonFinite, MarksOnlyItsBlock) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  const size_t block = spec.block ? spec.block : 1;
  const size_t count = 4 * std::max<size_t>(block, spec.rhtSize) + 3;
  // The unit a bad value spoils: its block, widened to whole +rht runs when rotated.
  const size_t unit = spec.rhtSize ? std::max<size_t>(block, spec.rhtSize) : block;
  const std::vector<float> clean = gaussian(count, 11);
  // topk marks its selection blocks as the block-scaled formats mark theirs.
  const bool blockWise = isBlockScaled(spec.format) || spec.format == Format::TopK;
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    // Every position of the second unit (a stride through the long ones).
    const size_t stride = unit <= 64 ? 1 : unit / 61;
    for (size_t pos = unit; pos < 2 * unit; pos += (pos + stride < 2 * unit ? stride : 1)) {
      std::vector<float> x = clean;
      x[pos] = bad;
      std::vector<float> residual(count, 0.25f);
      codec::EncodeParams params;
      params.residual = residual.data();
      const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, params), count);
      for (size_t i = 0; i < count; ++i) {
        const bool inBadUnit = i / unit == pos / unit;
        if (!blockWise) {
          // Element-wise formats carry the value itself: NaN stays NaN, +-Inf stays +-Inf.
          if (i == pos) {
            ASSERT_TRUE(std::isnan(bad) ? std::isnan(y[i]) : y[i] == bad) << i;
          } else {
            ASSERT_TRUE(std::isfinite(y[i])) << i;
          }
        } else if (inBadUnit) {
          ASSERT_FALSE(std::isfinite(y[i])) << GetParam() << " bad at " << pos << ", i=" << i;
        } else {
          ASSERT_TRUE(std::isfinite(y[i])) << GetParam() << " bad at " << pos << ", i=" << i;
        }
        const bool keepsResidual = blockWise ? inBadUnit : i == pos;
        if (keepsResidual)
          ASSERT_EQ(residual[i], 0.25f) << "residual of a non-finite block changed";
        else
          ASSERT_TRUE(std::isfinite(residual[i])) << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, NonFinite,
                         ::testing::Values("none", "bf16", "fp16", "fp8e4m3", "fp8e5m2", "mxfp8",
                                           "mxfp4", "nvfp4", "fp4ue5m3", "int8", "int4", "sign1",
                                           "fp8e4m3+sr", "nvfp4+rht", "int4+rht", "mxfp4+rht256",
                                           "sign1/b64", "int2", "int2+rht/b64",
                                           "topk0.05+fp8e4m3/b64"),
                         SpecName());

}  // namespace
}  // namespace qccl::test
