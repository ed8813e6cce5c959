// Input and output dtypes (fp32, bf16, fp16) and decode-accumulate into fp32.
#include <gtest/gtest.h>

#include "codecs/element/minifloat.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

template <class F>
std::vector<uint16_t> toHalfWidth(const std::vector<float>& x) {
  std::vector<uint16_t> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = uint16_t(encodeRne<F>(x[i]));
  return h;
}

template <class F>
std::vector<float> fromHalfWidth(const std::vector<uint16_t>& h) {
  std::vector<float> x(h.size());
  for (size_t i = 0; i < h.size(); ++i) x[i] = decode<F>(h[i]);
  return x;
}

class Dtypes : public ::testing::TestWithParam<std::string> {};

// A 16-bit input encodes exactly like its values widened to fp32, and a 16-bit output is the
// fp32 decode rounded to nearest even. Format none keeps the input's own width on the wire.
template <class F>
void checkHalfWidth(const CodecSpec& spec, qcclDataType_t type) {
  const size_t n = 3001;
  const std::vector<uint16_t> h = toHalfWidth<F>(gaussian(n, 2));
  const std::vector<float> widened = fromHalfWidth<F>(h);
  std::vector<uint8_t> chunk(codec::encodedSize(spec, n, type));
  codec::encode(spec, h.data(), n, type, chunk.data(), chunk.size(), {});
  if (spec.format != Format::None) {
    // Identical apart from header byte 7, which records the source dtype.
    std::vector<uint8_t> fromFloats = encodeVec(spec, widened);
    ASSERT_EQ(chunk.size(), fromFloats.size());
    EXPECT_EQ(chunk[7], uint8_t(type));
    fromFloats[7] = chunk[7];
    EXPECT_EQ(chunk, fromFloats);
  } else {
    EXPECT_EQ(chunk.size(), 64 + (2 * n + 15) / 16 * 16) << "none keeps 16-bit elements";
  }
  const std::vector<float> decoded32 = [&] {
    std::vector<float> y(n);
    codec::decode(spec, chunk.data(), chunk.size(), y.data(), n, qcclFloat32, false);
    return y;
  }();
  std::vector<uint16_t> decoded16(n);
  codec::decode(spec, chunk.data(), chunk.size(), decoded16.data(), n, type, false);
  EXPECT_EQ(decoded16, toHalfWidth<F>(decoded32));
  if (spec.format == Format::None) {
    EXPECT_EQ(decoded16, h) << "none must be exact";
  }
}

TEST_P(Dtypes, Bf16AndFp16InputsAndOutputs) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  checkHalfWidth<Bf16>(spec, qcclBfloat16);
  checkHalfWidth<Fp16>(spec, qcclFloat16);
}

TEST_P(Dtypes, DecodeAccumulateAddsTheDecodedValues) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  const size_t n = 5003;
  const std::vector<float> x = gaussian(n, 9);
  const std::vector<uint8_t> chunk = encodeVec(spec, x);
  const std::vector<float> decoded = decodeVec(spec, chunk, n);
  std::vector<float> acc = gaussian(n, 10);
  std::vector<float> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = acc[i] + decoded[i];
  codec::decode(spec, chunk.data(), chunk.size(), acc.data(), n, qcclFloat32, true);
  EXPECT_EQ(0, std::memcmp(acc.data(), want.data(), 4 * n));
}

INSTANTIATE_TEST_SUITE_P(Codecs, Dtypes,
                         ::testing::Values("none", "bf16", "fp16", "fp8e4m3", "mxfp4", "nvfp4",
                                           "int8", "sign1", "nvfp4+rht", "int2",
                                           "topk0.1+int4/b512"),
                         SpecName());

}  // namespace
}  // namespace qccl::test
