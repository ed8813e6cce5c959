// Every CPU target this machine can run produces the same bytes and the same decoded values for
// every codec, so the choice of target never changes a result.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "codecs/chunk_layout.h"
#include "codecs/cpu/crc32c.h"
#include "codecs/element/minifloat.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

class KernelTargets : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelTargets, BitIdentical) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  const std::vector<const codec::KernelTable*> tables = codec::runnableCpuKernels();
  const size_t n = 10007;
  const std::vector<float> x = studentT3(n, 17);
  const codec::KernelTable& first = *tables.front();
  // Stream offsets that split a Philox block (+sr), and one whose counters' low word wraps.
  for (const uint64_t offset : {uint64_t(0), uint64_t(4099), (uint64_t(1) << 34) - 4098}) {
    codec::EncodeParams p;
    p.seed = 5;
    p.call = 3;
    p.offset = offset;
    std::vector<float> r0(n, 0.01f);
    p.residual = r0.data();
    const std::vector<uint8_t> want = encodeVec(spec, x, p, first);
    const std::vector<float> wantDecoded = decodeVec(spec, want, n, first);
    for (const codec::KernelTable* t : tables) {
      std::vector<float> r(n, 0.01f);
      p.residual = r.data();
      EXPECT_EQ(encodeVec(spec, x, p, *t), want) << t->name << " vs " << first.name;
      EXPECT_EQ(r, r0) << t->name << ": residual differs";
      const std::vector<float> got = decodeVec(spec, want, n, *t);
      EXPECT_EQ(0, std::memcmp(got.data(), wantDecoded.data(), 4 * n)) << t->name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, KernelTargets,
                         ::testing::Values("none", "bf16", "fp16", "fp8e4m3", "fp8e5m2", "mxfp8",
                                           "mxfp4", "nvfp4", "fp4ue5m3", "int8", "int4", "sign1",
                                           "bf16+sr", "fp8e4m3+sr", "mxfp4+sr", "nvfp4+sr+rht",
                                           "int4+sr+rht128", "fp4ue5m3+rht", "int2", "int2+rht",
                                           "topk0.01+int2", "topk0.2+nvfp4/b256", "fp16+sr",
                                           "fp8e5m2+sr", "mxfp8+sr", "int8+sr", "int4+sr",
                                           "fp4ue5m3+sr", "mxfp4+rht16", "fp8e4m3+rht32",
                                           "int8+rht256"),
                         SpecName());

// Values of every fp32 binade, fp32 subnormals among them, signed zeros, values next to fp32's
// largest (which stochastic rounding may carry to infinity), and a few non-finite ones: scaled
// by a block's amax they reach every case of the rounding (nothing dropped, bits dropped, below
// one quantum of the format) on every lane position of the vectors.
std::vector<float> everyBinade(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t binade = uint32_t(i * 7 % 255);  // biased exponents 0 (subnormal) to 254
    const uint32_t sign = uint32_t(rng() & 1) << 31;
    x[i] = bitsFloat(sign | binade << 23 | (rng() & 0x7fffffu));
  }
  for (size_t i = 0; i < n; i += 89) x[i] = i % 2 ? -0.0f : 0.0f;
  for (size_t i = 5; i < n; i += 211) x[i] = bitsFloat(0x7f7fffffu - uint32_t(i % 3));
  x[n / 3] = std::numeric_limits<float>::infinity();
  x[n / 2] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

TEST_P(KernelTargets, BitIdenticalOnEveryBinade) {
  const CodecSpec spec = codec::parseCodecSpec(GetParam());
  const std::vector<const codec::KernelTable*> tables = codec::runnableCpuKernels();
  const std::vector<float> x = everyBinade(20011, 23);
  codec::EncodeParams p;
  p.seed = 11;
  p.offset = 3;
  const std::vector<uint8_t> want = encodeVec(spec, x, p, *tables.front());
  for (const codec::KernelTable* t : tables) {
    EXPECT_EQ(encodeVec(spec, x, p, *t), want) << t->name << " vs " << tables.front()->name;
  }
}

// Every 8-bit code (NaN and infinity codes, subnormals, both zeros) at many lane positions, put
// into the elements of a chunk, decodes to the same bits on every target; for the element-wise
// formats those are decode<F>'s, for mxfp8 times the blocks' scales.
TEST(KernelTargets, EveryEightBitCodeDecodesAlike) {
  const std::vector<const codec::KernelTable*> tables = codec::runnableCpuKernels();
  const size_t n = 256 * 17 + 5;  // each code at 17 lane positions, and a tail
  for (const char* name : {"fp8e4m3", "fp8e5m2", "mxfp8"}) {
    const CodecSpec spec = codec::parseCodecSpec(name);
    std::vector<uint8_t> chunk = encodeVec(spec, studentT3(n, 3), {}, *tables.front());
    const codec::ChunkLayout layout = codec::chunkLayout(spec, n, qcclFloat32);
    for (size_t i = 0; i < n; ++i) chunk[layout.elementsOffset + i] = uint8_t(i + i / 256);
    const std::vector<float> want = decodeVec(spec, chunk, n, *tables.front());
    for (size_t i = 0; spec.block == 0 && i < n; ++i) {
      const uint8_t code = uint8_t(i + i / 256);
      const float scalar =
          spec.format == codec::Format::Fp8E4M3 ? decode<E4M3>(code) : decode<E5M2>(code);
      ASSERT_EQ(floatBits(want[i]), floatBits(scalar)) << name << " code " << int(code);
    }
    for (const codec::KernelTable* t : tables) {
      const std::vector<float> got = decodeVec(spec, chunk, n, *t);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 4 * n)) << name << " on " << t->name;
    }
  }
}

TEST(KernelTargets, ListsPortableFirst) {
  const auto tables = codec::runnableCpuKernels();
  ASSERT_FALSE(tables.empty());
  EXPECT_STREQ(tables.front()->name, "portable");
}

TEST(Crc32c, KnownVectorOnEveryTarget) {
  const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  for (const codec::KernelTable* t : codec::runnableCpuKernels()) {
    EXPECT_EQ(t->crc32c(0, check, sizeof check), 0xE3069283u) << t->name;  // RFC 3720 check value
    // Feeding in two parts continues the same CRC.
    EXPECT_EQ(t->crc32c(t->crc32c(0, check, 4), check + 4, 5), 0xE3069283u) << t->name;
  }
  std::vector<uint8_t> big(100003);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 131 + 7);
  for (const codec::KernelTable* t : codec::runnableCpuKernels()) {
    EXPECT_EQ(t->crc32c(0, big.data(), big.size()),
              codec::crc32cPortable(0, big.data(), big.size()));
  }
}

}  // namespace
}  // namespace qccl::test
