// Round-trip error of every codec on Gaussian and heavy-tailed (Student-t, 3 dof) data, within
// the per-element bounds derived from each format (codec_test_util.h, docs/CODECS.md).
#include <gtest/gtest.h>

#include <tuple>

#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

enum class Data { Gaussian, StudentT3 };

void PrintTo(Data d, std::ostream* os) { *os << (d == Data::Gaussian ? "gaussian" : "student-t3"); }

std::vector<float> makeData(Data d, size_t n, uint32_t seed) {
  return d == Data::Gaussian ? gaussian(n, seed) : studentT3(n, seed);
}

using Param = std::tuple<std::string, Data, size_t>;

class RoundTrip : public ::testing::TestWithParam<Param> {};

TEST_P(RoundTrip, WithinFormatBound) {
  const auto& [specText, data, count] = GetParam();
  const CodecSpec spec = codec::parseCodecSpec(specText);
  const std::vector<float> x = makeData(data, count, uint32_t(count) * 31 + uint32_t(data));
  codec::EncodeParams params;
  params.seed = 0xfeed;
  params.call = 5;
  const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, params), count);
  const std::vector<float> rotated = quantizerDomain(spec, x, params.seed);

  if (spec.format == Format::NvFp4) {
    // The nvfp4 bound assumes normal E4M3 block scales: block amax * s_enc / 6 >= 2^-6.
    double chunkAmax = 0;
    for (float v : rotated) chunkAmax = std::max(chunkAmax, double(std::fabs(v)));
    for (size_t s = 0; s < rotated.size(); s += spec.block) {
      double amax = 0;
      for (size_t i = s; i < std::min(rotated.size(), s + spec.block); ++i)
        amax = std::max(amax, double(std::fabs(rotated[i])));
      ASSERT_GE(amax * (2688.0 / chunkAmax) / 6, std::ldexp(1.0, -6)) << "test data too skewed";
    }
  }

  if (spec.format == Format::Sign1) {
    // Decoding gives sign(x) * mean|x| of the block: the error is exactly ||x| - mean|.
    for (size_t s = 0; s < count; s += spec.block) {
      const size_t end = std::min(count, s + spec.block);
      double mean = 0;
      for (size_t i = s; i < end; ++i) mean += std::fabs(x[i]);
      mean /= double(end - s);
      for (size_t i = s; i < end; ++i) {
        ASSERT_EQ(std::signbit(y[i]), std::signbit(x[i])) << i;
        ASSERT_NEAR(std::fabs(y[i]), mean, 1e-5 * mean) << i;
      }
    }
    return;
  }

  const std::vector<double> b = bounds(spec, rotated);
  if (spec.rhtSize == 0) {
    for (size_t i = 0; i < count; ++i) {
      ASSERT_LE(std::fabs(double(x[i]) - y[i]), b[i])
          << specText << " element " << i << " x=" << x[i] << " y=" << y[i];
    }
  } else {
    // The rotation is orthogonal: the L2 error equals the error in the rotated domain.
    double boundL2 = 0;
    for (double v : b) boundL2 += v * v;
    EXPECT_LE(l2Diff(x, y), std::sqrt(boundL2) + 1e-5 * l2(x)) << specText;
  }
}

std::vector<std::string> roundTripSpecs() {
  std::vector<std::string> specs = allFormatSpecs();
  for (const char* s :
       {"bf16+sr",     "fp16+sr",        "fp8e4m3+sr",   "fp8e5m2+sr",   "mxfp8+sr",
        "mxfp4+sr",    "nvfp4+sr",       "fp4ue5m3+sr",  "int8+sr",      "int4+sr",
        "fp8e4m3+rht", "mxfp4+rht",      "nvfp4+rht",    "nvfp4+sr+rht", "int4+rht16",
        "int8+rht256", "fp4ue5m3+rht32", "mxfp8+rht128", "fp8e4m3/b32",  "int4/b16",
        "int8/b1024",  "sign1/b256",     "fp4ue5m3/b64", "int2+rht",     "int2/b32"}) {
    specs.push_back(s);
  }
  return specs;
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  return specTestName(std::get<0>(info.param)) +
         (std::get<1>(info.param) == Data::Gaussian ? "_gauss_" : "_t3_") +
         std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Codecs, RoundTrip,
                         ::testing::Combine(::testing::ValuesIn(roundTripSpecs()),
                                            ::testing::Values(Data::Gaussian, Data::StudentT3),
                                            ::testing::Values(size_t(1), size_t(7), size_t(4099),
                                                              size_t(65541))),
                         paramName);

}  // namespace
}  // namespace qccl::test
