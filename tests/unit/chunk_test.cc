// The wire chunk: layout sizes, header bytes at their documented offsets, and decode refusing
// chunks that do not match (another codec or count, bad magic, truncation, corruption).
#include <gtest/gtest.h>

#include "codecs/chunk_header.h"
#include "codecs/chunk_layout.h"
#include "codecs/codec_error.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

using codec::CodecError;
using codec::ErrorKind;

uint32_t le32(const std::vector<uint8_t>& b, size_t off) {
  return uint32_t(b[off]) | uint32_t(b[off + 1]) << 8 | uint32_t(b[off + 2]) << 16 |
         uint32_t(b[off + 3]) << 24;
}

uint64_t le64(const std::vector<uint8_t>& b, size_t off) {
  return uint64_t(le32(b, off)) | uint64_t(le32(b, off + 4)) << 32;
}

TEST(ChunkLayout, SectionSizes) {
  struct Case {
    const char* spec;
    size_t count;
    size_t scales;
    size_t elements;
  } cases[] = {
      {"fp8e4m3", 1000, 32, 1008},  // 8 fp32 scales; 1000 bytes -> 1008
      {"mxfp4", 1000, 32, 512},     // 32 E8M0 scales; 500 bytes -> 512
      {"nvfp4", 16, 16, 16},        // 1 scale; 8 bytes
      {"int4", 129, 16, 80},        // 3 fp32 scales; 65 bytes -> 80
      {"sign1", 4097, 16, 528},     // 3 fp32 scales; 513 bytes -> 528
      {"int2", 257, 16, 80},        // 3 fp32 scales; 65 bytes -> 80
      {"bf16", 3, 0, 16},
      {"nvfp4+rht", 65, 16, 64},  // padded to 128 elements: 8 scales, 64 bytes
      {"int8", 0, 0, 0},
  };
  for (const Case& c : cases) {
    const codec::ChunkLayout l =
        codec::chunkLayout(codec::parseCodecSpec(c.spec), c.count, qcclFloat32);
    EXPECT_EQ(l.scalesOffset, 64u) << c.spec;
    EXPECT_EQ(l.scalesBytes, c.scales) << c.spec;
    EXPECT_EQ(l.elementsOffset, 64 + c.scales) << c.spec;
    EXPECT_EQ(l.elementsBytes, c.elements) << c.spec;
    EXPECT_EQ(l.totalBytes, 64 + c.scales + c.elements) << c.spec;
  }
  const codec::CodecSpec none = codec::parseCodecSpec("none");
  EXPECT_EQ(codec::chunkLayout(none, 10, qcclBfloat16).elementsBytes, 32u);
  EXPECT_EQ(codec::chunkLayout(none, 10, qcclFloat32).elementsBytes, 48u);
  EXPECT_THROW(codec::chunkLayout(none, 10, qcclInt32), CodecError);
  EXPECT_THROW(codec::chunkLayout(none, size_t(1) << 60, qcclFloat32), CodecError);
}

TEST(ChunkHeader, DocumentedByteOffsets) {
  const CodecSpec spec = codec::parseCodecSpec("nvfp4+sr+rht128");
  codec::EncodeParams p;
  p.seed = 0x1122334455667788ull;
  p.crc32c = true;
  const std::vector<float> x = gaussian(1000, 1);
  const std::vector<uint8_t> c = encodeVec(spec, x, p);
  EXPECT_EQ(std::string(c.begin(), c.begin() + 4), "QCCL");
  EXPECT_EQ(c[4], 1);                       // version
  EXPECT_EQ(c[5], uint8_t(Format::NvFp4));  // format id
  EXPECT_EQ(c[6], codec::kFlagStochastic | codec::kFlagCrc32c);
  EXPECT_EQ(c[7], uint8_t(qcclFloat32));                    // source dtype
  EXPECT_EQ(le32(c, 8), 16u);                               // block
  EXPECT_EQ(uint32_t(c[12]) | uint32_t(c[13]) << 8, 128u);  // rht size
  EXPECT_EQ(le64(c, 16), 1000u);                            // count
  double amax = 0;
  for (float v : quantizerDomain(spec, x, p.seed)) amax = std::max(amax, double(std::fabs(v)));
  EXPECT_NEAR(bitsFloat(le32(c, 24)), 2688.0 / amax, 1e-3 * 2688.0 / amax);  // s_enc
  EXPECT_EQ(le32(c, 28), codec::cpuKernels().crc32c(0, c.data() + 64, c.size() - 64));
  EXPECT_EQ(le64(c, 32), p.seed);
  EXPECT_EQ(le64(c, 40), c.size() - 64);  // payload bytes
  for (size_t i = 48; i < 64; ++i) EXPECT_EQ(c[i], 0) << i;
}

// Decoding chunk (possibly altered) must fail with InvalidUsage and leave the output alone.
void expectRejected(const CodecSpec& spec, const std::vector<uint8_t>& chunk, size_t count,
                    const std::string& why) {
  std::vector<float> out(count, 7.0f);
  try {
    codec::decode(spec, chunk.data(), chunk.size(), out.data(), count, qcclFloat32, false);
    ADD_FAILURE() << "accepted: " << why;
  } catch (const CodecError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidUsage) << why << ": " << e.what();
  }
  for (float v : out) ASSERT_EQ(v, 7.0f) << why << ": output touched";
}

TEST(ChunkValidation, RejectsMismatchesAndCorruption) {
  const CodecSpec spec = codec::parseCodecSpec("fp8e4m3");
  const size_t n = 1000;
  const std::vector<float> x = gaussian(n, 2);
  codec::EncodeParams crc;
  crc.crc32c = true;
  const std::vector<uint8_t> good = encodeVec(spec, x, crc);
  EXPECT_NO_THROW(decodeVec(spec, good, n));

  expectRejected(codec::parseCodecSpec("int8"), good, n, "other codec");
  expectRejected(codec::parseCodecSpec("fp8e4m3/b64"), good, n, "other block");
  expectRejected(spec, good, n - 1, "other count");
  expectRejected(spec, std::vector<uint8_t>(good.begin(), good.begin() + 40), n, "short header");
  expectRejected(spec, std::vector<uint8_t>(good.begin(), good.end() - 16), n, "truncated");
  struct Corruption {
    size_t offset;
    const char* what;
  } corruptions[] = {{0, "magic"},     {4, "version"}, {5, "format"},    {6, "flags"},
                     {7, "dtype"},     {8, "block"},   {12, "rht size"}, {14, "reserved"},
                     {16, "count"},    {24, "scale"},  {28, "crc"},      {40, "payload size"},
                     {50, "reserved"}, {64, "scales"}, {200, "elements"}};
  for (const Corruption& c : corruptions) {
    std::vector<uint8_t> bad = good;
    bad[c.offset] ^= 0x5A;
    expectRejected(spec, bad, n, c.what);
  }
}

TEST(ChunkValidation, NvFp4ChunkScaleMustBePositiveAndFinite) {
  const CodecSpec spec = codec::parseCodecSpec("nvfp4");
  std::vector<uint8_t> chunk = encodeVec(spec, gaussian(64, 3));
  for (uint32_t bits : {0x00000000u, 0x7f800000u, 0x7fc00000u, 0xbf800000u}) {
    for (int i = 0; i < 4; ++i) chunk[24 + i] = uint8_t(bits >> (8 * i));
    expectRejected(spec, chunk, 64, "chunk scale");
  }
}

TEST(ChunkEncode, EqualInputsGiveIdenticalBytes) {
  // Section padding is zeroed, whatever the output buffer held before.
  const CodecSpec spec = codec::parseCodecSpec("int4");
  const std::vector<float> x = gaussian(77, 4);
  std::vector<uint8_t> a(codec::encodedSize(spec, 77, qcclFloat32), 0x00);
  std::vector<uint8_t> b(a.size(), 0xFF);
  codec::encode(spec, x.data(), 77, qcclFloat32, a.data(), a.size(), {});
  codec::encode(spec, x.data(), 77, qcclFloat32, b.data(), b.size(), {});
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace qccl::test
