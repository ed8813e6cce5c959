// Error feedback: encoding the same vector T times with a residual, the mean of the decoded
// outputs converges to the input as O(1/T): sum of outputs = T x + e_0 - e_T exactly (up to the
// fp32 rounding of the residual arithmetic), so |mean - x| = |e_T| / T.
#include <gtest/gtest.h>

#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

struct EfCase {
  std::string spec;
  qcclDataType_t residualType;
};

std::string caseName(const EfCase& c) {
  return specTestName(c.spec) + "_residual_" + dtypeName(c.residualType);
}

void PrintTo(const EfCase& c, std::ostream* os) { *os << caseName(c); }

class ErrorFeedback : public ::testing::TestWithParam<EfCase> {};

TEST_P(ErrorFeedback, MeanConvergesAsOneOverT) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam().spec);
  const qcclDataType_t rtype = GetParam().residualType;
  const size_t n = 4096 + 13;
  const std::vector<float> x = studentT3(n, 21);
  std::vector<uint16_t> residualBf16(n, 0);
  std::vector<float> residualF32(n, 0.0f);
  codec::EncodeParams params;
  params.residual = rtype == qcclFloat32 ? static_cast<void*>(residualF32.data())
                                         : static_cast<void*>(residualBf16.data());
  params.residualType = rtype;
  std::vector<double> sum(n, 0.0);
  double err[3] = {0, 0, 0};
  double maxResidual = 0;
  int checkpoint = 0;
  for (int t = 1; t <= 100; ++t) {
    params.call = uint32_t(t);
    const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, params), n);
    for (size_t i = 0; i < n; ++i) sum[i] += y[i];
    std::vector<float> r(n);
    for (size_t i = 0; i < n; ++i)
      r[i] = rtype == qcclFloat32 ? residualF32[i] : bitsFloat(uint32_t(residualBf16[i]) << 16);
    maxResidual = std::max(maxResidual, l2(r));
    if (t == 1 || t == 10 || t == 100) {
      double e2 = 0;
      for (size_t i = 0; i < n; ++i) e2 += (sum[i] / t - x[i]) * (sum[i] / t - x[i]);
      err[checkpoint++] = std::sqrt(e2) / l2(x);
    }
  }
  ASSERT_GT(err[0], 0.0) << "codec " << GetParam().spec << " is lossless on this data";
  // |mean_T - x| = |e_T| / T, with slack for the residual's own rounding (bf16 keeps 8 bits).
  const double slack = rtype == qcclFloat32 ? 1.01 : 1.1;
  EXPECT_LE(err[1], slack * maxResidual / l2(x) / 10 + 1e-6) << "T=10";
  EXPECT_LE(err[2], slack * maxResidual / l2(x) / 100 + 1e-5) << "T=100";
  // sign1 and sparse top-k need longer before the 1/T regime (their own tests below and in
  // topk_codec_test.cc): a topk0.01 element waits ~100 steps to be sent.
  const bool slowStart = spec.format == Format::Sign1 ||
                         (spec.format == Format::TopK && spec.densityPpm < codec::kPpm / 10);
  if (!slowStart) {
    EXPECT_LT(err[2], err[0] / 10) << "T=100 not 10x better than T=1";
  }
}

// sign1 decodes every element of a block as +-mean|p|, so the residual must first grow until
// that scale covers the block's largest element (max |x| is several times mean |x|) before the
// 1/T regime starts: on Student-t data that takes a few thousand steps (docs/CODECS.md).
TEST(ErrorFeedbackSign1, ConvergesOnceTheResidualHasGrown) {
  const CodecSpec spec = codec::parseCodecSpec("sign1");
  const size_t n = 4096 + 13;
  const std::vector<float> x = studentT3(n, 21);
  std::vector<float> residual(n, 0.0f);
  codec::EncodeParams params;
  params.residual = residual.data();
  std::vector<double> sum(n, 0.0);
  std::vector<double> err;
  for (int t = 1; t <= 20000; ++t) {
    const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, params), n);
    for (size_t i = 0; i < n; ++i) sum[i] += y[i];
    if (t == 1 || t == 2000 || t == 20000) {
      double e2 = 0;
      for (size_t i = 0; i < n; ++i) e2 += (sum[i] / t - x[i]) * (sum[i] / t - x[i]);
      err.push_back(std::sqrt(e2) / l2(x));
    }
  }
  EXPECT_LT(err[2], err[0] / 10);
  EXPECT_LT(err[2], err[1] / 5) << "not in the 1/T regime between T=2000 and T=20000";
}

// bf16 round to nearest even, written out here so that the check does not use the codec's own.
uint16_t bf16RoundNearestEven(float f) {
  const uint32_t b = floatBits(f);
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

float bf16Value(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

// One encode with a residual leaves in it exactly what the chunk misses: e' = (x + e) - D(chunk)
// element by element, computed here from the chunk itself, rounded to bf16 for a bf16 residual;
// a non-finite block keeps e. Inputs fp32 and bf16, with and without a rotation.
TEST_P(ErrorFeedback, ResidualIsExactlyWhatTheChunkMisses) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam().spec);
  const qcclDataType_t rtype = GetParam().residualType;
  const size_t n = 3000 + 7;  // not a whole number of tiles or blocks
  std::vector<float> x = studentT3(n, 5);
  x[100] = std::nanf("");
  const std::vector<float> e0 = gaussian(n, 6, 0.01f);
  for (const qcclDataType_t inputType : {qcclFloat32, qcclBfloat16}) {
    std::vector<uint16_t> xBf16(n), eBf16(n);
    std::vector<float> p(n), eF32 = e0;
    for (size_t i = 0; i < n; ++i) {
      xBf16[i] = uint16_t(floatBits(x[i]) >> 16);
      eBf16[i] = uint16_t(floatBits(e0[i]) >> 16);
      const float xi = inputType == qcclFloat32 ? x[i] : bf16Value(xBf16[i]);
      p[i] = xi + (rtype == qcclFloat32 ? e0[i] : bf16Value(eBf16[i]));
    }
    codec::EncodeParams params;
    params.residual =
        rtype == qcclFloat32 ? static_cast<void*>(eF32.data()) : static_cast<void*>(eBf16.data());
    params.residualType = rtype;
    const void* input = inputType == qcclFloat32 ? static_cast<const void*>(x.data())
                                                 : static_cast<const void*>(xBf16.data());
    std::vector<uint8_t> chunk(codec::encodedSize(spec, n, inputType));
    codec::encode(spec, input, n, inputType, chunk.data(), chunk.size(), params,
                  codec::cpuKernels());
    std::vector<float> d(n);
    codec::decode(spec, chunk.data(), chunk.size(), d.data(), n, qcclFloat32, false,
                  codec::cpuKernels());
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool finite = std::isfinite(d[i]);
      kept += !finite;
      if (rtype == qcclFloat32) {
        const float want = finite ? p[i] - d[i] : e0[i];
        ASSERT_EQ(floatBits(eF32[i]), floatBits(want)) << "element " << i;
      } else {
        const uint16_t want =
            finite ? bf16RoundNearestEven(p[i] - d[i]) : uint16_t(floatBits(e0[i]) >> 16);
        ASSERT_EQ(eBf16[i], want) << "element " << i;
      }
    }
    EXPECT_GT(kept, 0u) << "the NaN's block should keep its residual";
    EXPECT_LT(kept, n) << "the other blocks should update theirs";
  }
}

std::vector<EfCase> efCases() {
  std::vector<EfCase> cases;
  for (const std::string& s : allFormatSpecs()) {
    if (s != "none") cases.push_back({s, qcclFloat32});
  }
  for (const char* s : {"fp8e4m3+sr", "nvfp4+rht", "mxfp4+sr+rht", "int4+rht", "topk0.1+int4/b512",
                        "topk0.1+bf16/b1024", "topk0.01+int2/b1024", "topk0.2+nvfp4/b256"}) {
    cases.push_back({s, qcclFloat32});
  }
  for (const char* s : {"fp8e4m3", "mxfp4", "int8", "sign1", "topk0.05+fp8e4m3/b512"}) {
    cases.push_back({s, qcclBfloat16});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Codecs, ErrorFeedback, ::testing::ValuesIn(efCases()),
                         [](const auto& info) { return caseName(info.param); });

}  // namespace
}  // namespace qccl::test
