// The codec C API through libqccl.so: every misuse returns qcclInvalidArgument or
// qcclInvalidUsage with a message from qcclGetLastError, and never touches the caller's output.
#include <gtest/gtest.h>
#include <qccl/qccl_codec.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

qcclCodec_t parse(const char* spec) {
  qcclCodec_t c;
  EXPECT_EQ(qcclCodecParse(spec, &c), qcclSuccess) << qcclGetLastError(nullptr);
  return c;
}

void expectError(qcclResult_t got, qcclResult_t want, const char* fragment) {
  EXPECT_EQ(got, want) << qcclGetErrorString(got);
  EXPECT_NE(std::string(qcclGetLastError(nullptr)).find(fragment), std::string::npos)
      << "message: " << qcclGetLastError(nullptr);
}

std::vector<float> ramp(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = std::sin(float(i) * 0.37f);
  return x;
}

TEST(CodecApi, VersionAndErrorStrings) {
  int version = 0;
  ASSERT_EQ(qcclGetVersion(&version), qcclSuccess);
  EXPECT_EQ(version, QCCL_VERSION_CODE);
  expectError(qcclGetVersion(nullptr), qcclInvalidArgument, "qcclGetVersion: version is NULL");
  EXPECT_STREQ(qcclGetErrorString(qcclSuccess), "no error");
  EXPECT_NE(std::string(qcclGetErrorString(qcclTimeout)).find("QCCL_TIMEOUT"), std::string::npos);
  EXPECT_STREQ(qcclGetErrorString(qcclResult_t(99)), "unknown result code");
}

TEST(CodecApi, EnumValuesMatchNccl) {
  EXPECT_EQ(qcclInvalidArgument, 4);
  EXPECT_EQ(qcclInvalidUsage, 5);
  EXPECT_EQ(qcclInProgress, 7);
  EXPECT_EQ(qcclFloat16, 6);
  EXPECT_EQ(qcclFloat32, 7);
  EXPECT_EQ(qcclBfloat16, 9);
  EXPECT_EQ(qcclFloat8e5m2, 11);
  EXPECT_EQ(qcclAvg, 4);
}

TEST(CodecApi, RoundTripAndName) {
  const qcclCodec_t c = parse("NVFP4+RHT");
  char name[32];
  ASSERT_EQ(qcclCodecName(c, name, sizeof name), qcclSuccess);
  EXPECT_STREQ(name, "nvfp4+rht");
  expectError(qcclCodecName(c, name, 3), qcclInvalidArgument, "needs 10 bytes");
  const std::vector<float> x = ramp(1000);
  size_t bytes = 0;
  ASSERT_EQ(qcclCodecEncodedSize(c, x.size(), qcclFloat32, &bytes), qcclSuccess);
  std::vector<uint8_t> chunk(bytes);
  qcclEncodeOptions_t options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.seed = 3;
  options.flags = QCCL_ENCODE_CRC32C;
  ASSERT_EQ(qcclEncode(c, x.data(), x.size(), qcclFloat32, chunk.data(), bytes, &options, nullptr),
            qcclSuccess);
  std::vector<float> y(x.size());
  ASSERT_EQ(qcclDecode(c, chunk.data(), bytes, y.data(), y.size(), qcclFloat32, nullptr),
            qcclSuccess);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], x[i], 0.5) << i;
  std::vector<float> acc(x.size(), 1.0f);
  ASSERT_EQ(qcclDecodeAccumulate(c, chunk.data(), bytes, acc.data(), acc.size(), nullptr),
            qcclSuccess);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(acc[i], 1.0f + y[i]);
}

TEST(CodecApi, ErrorFeedbackThroughOptions) {
  const qcclCodec_t c = parse("int4");
  const std::vector<float> x = ramp(300);
  size_t bytes = 0;
  qcclCodecEncodedSize(c, x.size(), qcclFloat32, &bytes);
  std::vector<uint8_t> chunk(bytes);
  std::vector<float> residual(x.size(), 0.0f), y(x.size());
  qcclEncodeOptions_t options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.residual = residual.data();
  ASSERT_EQ(qcclEncode(c, x.data(), x.size(), qcclFloat32, chunk.data(), bytes, &options, nullptr),
            qcclSuccess);
  ASSERT_EQ(qcclDecode(c, chunk.data(), bytes, y.data(), y.size(), qcclFloat32, nullptr),
            qcclSuccess);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(residual[i], x[i] - y[i]) << i;
}

TEST(CodecApi, BadArguments) {
  qcclCodec_t c;
  expectError(qcclCodecParse(nullptr, &c), qcclInvalidArgument, "must not be NULL");
  expectError(qcclCodecParse("fp8e4m3", nullptr), qcclInvalidArgument, "must not be NULL");
  expectError(qcclCodecParse("fp9", &c), qcclInvalidArgument,
              "qcclCodecParse: codec spec 'fp9': unknown format");
  qcclCodec_t garbage;
  std::memset(&garbage, 0xAB, sizeof garbage);
  size_t bytes = 0;
  expectError(qcclCodecEncodedSize(garbage, 10, qcclFloat32, &bytes), qcclInvalidArgument,
              "not filled by qcclCodecParse");
  c = parse("fp8e4m3");
  expectError(qcclCodecEncodedSize(c, 10, qcclInt32, &bytes), qcclInvalidArgument,
              "unsupported dtype");
  expectError(qcclCodecEncodedSize(c, size_t(1) << 62, qcclFloat32, &bytes), qcclInvalidArgument,
              "exceeds");
  expectError(qcclCodecEncodedSize(c, 10, qcclFloat32, nullptr), qcclInvalidArgument, "NULL");

  const std::vector<float> x = ramp(100);
  ASSERT_EQ(qcclCodecEncodedSize(c, x.size(), qcclFloat32, &bytes), qcclSuccess);
  std::vector<uint8_t> out(bytes, 0xEE);
  const std::vector<uint8_t> untouched = out;
  expectError(qcclEncode(c, nullptr, x.size(), qcclFloat32, out.data(), bytes, nullptr, nullptr),
              qcclInvalidArgument, "input is NULL");
  expectError(qcclEncode(c, x.data(), x.size(), qcclFloat32, nullptr, bytes, nullptr, nullptr),
              qcclInvalidArgument, "output is NULL");
  expectError(
      qcclEncode(c, x.data(), x.size(), qcclFloat32, out.data(), bytes - 1, nullptr, nullptr),
      qcclInvalidArgument, "the chunk needs");
  expectError(qcclEncode(c, x.data(), x.size(), qcclFloat64, out.data(), bytes, nullptr, nullptr),
              qcclInvalidArgument, "unsupported dtype");
  expectError(qcclEncode(c, x.data(), x.size(), qcclFloat32, out.data(), bytes, nullptr,
                         reinterpret_cast<cudaStream_t>(0x1)),
              qcclInvalidUsage, "NULL stream");
  qcclEncodeOptions_t options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.size = 3;
  expectError(qcclEncode(c, x.data(), x.size(), qcclFloat32, out.data(), bytes, &options, nullptr),
              qcclInvalidArgument, "options->size");
  options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.flags = 0x80;
  expectError(qcclEncode(c, x.data(), x.size(), qcclFloat32, out.data(), bytes, &options, nullptr),
              qcclInvalidArgument, "unknown bits");
  std::vector<double> residual(x.size());
  options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.residual = residual.data();
  options.residualType = qcclFloat64;
  expectError(qcclEncode(c, x.data(), x.size(), qcclFloat32, out.data(), bytes, &options, nullptr),
              qcclInvalidArgument, "residual dtype");
  std::vector<uint8_t> overlap(bytes + 400);
  expectError(qcclEncode(c, overlap.data(), x.size(), qcclFloat32, overlap.data() + 8, bytes,
                         nullptr, nullptr),
              qcclInvalidArgument, "overlap");
  EXPECT_EQ(out, untouched) << "a failed encode wrote to the output";
}

TEST(CodecApi, BadChunks) {
  const qcclCodec_t c = parse("mxfp4");
  const std::vector<float> x = ramp(256);
  size_t bytes = 0;
  qcclCodecEncodedSize(c, x.size(), qcclFloat32, &bytes);
  std::vector<uint8_t> chunk(bytes);
  ASSERT_EQ(qcclEncode(c, x.data(), x.size(), qcclFloat32, chunk.data(), bytes, nullptr, nullptr),
            qcclSuccess);
  std::vector<float> y(x.size(), 42.0f);
  expectError(
      qcclDecode(parse("mxfp8"), chunk.data(), bytes, y.data(), y.size(), qcclFloat32, nullptr),
      qcclInvalidUsage,
      "qcclDecode: chunk holds 256 elements of codec mxfp4; this call expects 256 elements of "
      "mxfp8");
  expectError(qcclDecode(c, chunk.data(), bytes, y.data(), 255, qcclFloat32, nullptr),
              qcclInvalidUsage, "expects 255 elements");
  expectError(qcclDecode(c, chunk.data(), 10, y.data(), y.size(), qcclFloat32, nullptr),
              qcclInvalidUsage, "shorter than the 64-byte header");
  expectError(qcclDecode(c, chunk.data(), bytes - 1, y.data(), y.size(), qcclFloat32, nullptr),
              qcclInvalidUsage, "layout needs");
  expectError(qcclDecode(c, nullptr, bytes, y.data(), y.size(), qcclFloat32, nullptr),
              qcclInvalidArgument, "input is NULL");
  expectError(qcclDecode(c, chunk.data(), bytes, nullptr, y.size(), qcclFloat32, nullptr),
              qcclInvalidArgument, "output is NULL");
  expectError(qcclDecode(c, chunk.data(), bytes, y.data(), y.size(), qcclInt8, nullptr),
              qcclInvalidArgument, "unsupported output dtype");
  chunk[0] = 'X';
  expectError(qcclDecode(c, chunk.data(), bytes, y.data(), y.size(), qcclFloat32, nullptr),
              qcclInvalidUsage, "bad magic");
  for (float v : y) ASSERT_EQ(v, 42.0f) << "a failed decode wrote to the output";
}

TEST(CodecApi, ZeroCount) {
  const qcclCodec_t c = parse("int8");
  size_t bytes = 0;
  ASSERT_EQ(qcclCodecEncodedSize(c, 0, qcclFloat32, &bytes), qcclSuccess);
  EXPECT_EQ(bytes, 64u);
  std::vector<uint8_t> chunk(bytes);
  ASSERT_EQ(qcclEncode(c, nullptr, 0, qcclFloat32, chunk.data(), bytes, nullptr, nullptr),
            qcclSuccess);
  ASSERT_EQ(qcclDecode(c, chunk.data(), bytes, nullptr, 0, qcclFloat32, nullptr), qcclSuccess);
}

}  // namespace
