// The topk codec (docs/CODECS.md, "Top-k"): its selection against a sort, its layout, what it
// decodes to in every output form, error feedback over many steps, and malformed chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "codecs/codec_error.h"
#include "codecs/element/minifloat.h"
#include "codecs/topk_codec.h"
#include "codecs/topk_layout.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

using codec::CodecError;
using codec::ErrorKind;

// The definition, by sort: largest |x| first, the lower index on ties, positions ascending.
std::vector<uint16_t> sortedSelection(const std::vector<float>& p, uint32_t keep) {
  std::vector<uint16_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint16_t a, uint16_t b) { return std::fabs(p[a]) > std::fabs(p[b]); });
  order.resize(std::min<size_t>(keep, p.size()));
  std::sort(order.begin(), order.end());
  return order;
}

TEST(TopkSelect, MatchesASortWithTiesToTheLowerIndex) {
  std::mt19937 rng(3);
  codec::TopkScratch scratch;
  for (uint32_t length : {1u, 7u, 16u, 100u, 4096u, 8192u}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> p = studentT3(length, uint32_t(rng()));
      // Many exact ties, ±0, and values that share a histogram bin.
      for (size_t i = 0; i < length; i += 3) p[i] = float(int(rng() % 7) - 3) * 0.5f;
      if (length > 2) p[1] = -0.0f;
      for (uint32_t keep : {1u, 2u, length / 3 + 1, length - 1, length}) {
        if (keep == 0 || keep > length) continue;
        std::vector<uint16_t> got(keep);
        ASSERT_TRUE(codec::selectTopk(p.data(), length, keep, scratch, got.data()));
        ASSERT_EQ(got, sortedSelection(p, keep)) << "length " << length << " keep " << keep;
      }
    }
  }
}

// The selection estimates its threshold from every 16th key; a block whose sampled keys are its
// largest makes the estimate too high, and the exact fallback must still give the definition.
TEST(TopkSelect, MatchesASortWhenTheSampleMisleads) {
  codec::TopkScratch scratch;
  std::vector<float> p(4096);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i % 16 == 0 ? 1000.0f + float(i) : float(i % 7);
  for (uint32_t keep : {1u, 41u, 300u, 1000u}) {
    std::vector<uint16_t> got(keep);
    ASSERT_TRUE(codec::selectTopk(p.data(), 4096, keep, scratch, got.data()));
    ASSERT_EQ(got, sortedSelection(p, keep)) << "keep " << keep;
  }
}

TEST(TopkSelect, RefusesNonFiniteBlocks) {
  codec::TopkScratch scratch;
  std::vector<uint16_t> positions(4, 0xBEEF);
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    std::vector<float> p = {1, 2, bad, 4, 5, 6};
    EXPECT_FALSE(codec::selectTopk(p.data(), 6, 4, scratch, positions.data()));
    EXPECT_EQ(positions[0], 0xBEEF) << "wrote positions";
  }
}

TEST(TopkLayout, SectionsAndIndexFields) {
  // topk0.01, blocks of 4096: keep 41, 12-bit positions: a 492-bit list (62 bytes) per block.
  const CodecSpec spec = codec::parseCodecSpec("topk0.01+int2");
  const codec::TopkLayout l = codec::topkLayout(spec, 3 * 4096 + 100);
  EXPECT_EQ(l.blocks, 4u);
  EXPECT_EQ(l.keep, 41u);
  EXPECT_EQ(l.positionBits, 12u);
  EXPECT_FALSE(l.field.bitmap);
  EXPECT_EQ(l.field.bytes, 62u);
  EXPECT_EQ(l.lastKeep, 1u);  // ceil(0.01 * 100)
  EXPECT_EQ(l.values, 3 * 41 + 1u);
  EXPECT_EQ(l.flagsOffset, 64u);
  EXPECT_EQ(l.flagsBytes, 16u);
  EXPECT_EQ(l.indexOffset, 80u);
  EXPECT_EQ(l.indexBytes, 192u);  // 3 * 62 + 2 = 188 -> 192
  // int2 values: 2 fp32 scales (16 bytes), 124 codes in 31 bytes (32).
  EXPECT_EQ(l.valueSections.scalesOffset, 272u);
  EXPECT_EQ(l.valueSections.elementsOffset, 288u);
  EXPECT_EQ(l.totalBytes, 320u);
  EXPECT_EQ(codec::encodedSize(spec, 3 * 4096 + 100, qcclFloat32), 320u);
  // A tenth of 4096 as a list would take 410 * 12 bits: the 4096-bit bitmap is shorter.
  const codec::TopkLayout dense = codec::topkLayout(codec::parseCodecSpec("topk0.1+bf16"), 4096);
  EXPECT_TRUE(dense.field.bitmap);
  EXPECT_EQ(dense.field.bytes, 512u);
  EXPECT_EQ(codec::topkLayout(spec, 0).totalBytes, 64u);
}

// Decoding: the kept values where they were, +0 elsewhere; bf16/fp16 outputs are the fp32
// decode rounded; accumulation adds at the kept positions only.
TEST(TopkCodec, DecodesKeptValuesInPlaceInEveryOutputForm) {
  const CodecSpec spec = codec::parseCodecSpec("topk0.05+fp8e4m3/b512");
  const size_t n = 2000;
  std::vector<float> x = studentT3(n, 11);
  const std::vector<uint8_t> chunk = encodeVec(spec, x);
  const std::vector<float> y = decodeVec(spec, chunk, n);
  const codec::TopkLayout l = codec::topkLayout(spec, n);
  size_t nonzero = 0;
  for (size_t start = 0; start < n; start += 512) {
    const size_t len = std::min<size_t>(512, n - start);
    std::vector<float> block(x.begin() + start, x.begin() + start + len);
    const auto kept = sortedSelection(block, codec::topkKeep(spec.densityPpm, uint32_t(len)));
    size_t j = 0;
    for (size_t i = 0; i < len; ++i) {
      if (j < kept.size() && kept[j] == i) {
        EXPECT_LE(std::fabs(y[start + i] - x[start + i]), std::fabs(x[start + i]) / 8) << i;
        ++j;
        nonzero += y[start + i] != 0;
      } else {
        ASSERT_EQ(floatBits(y[start + i]), 0u) << "element " << start + i << " not kept";
      }
    }
  }
  EXPECT_EQ(nonzero, l.values);
  for (const qcclDataType_t type : {qcclBfloat16, qcclFloat16}) {
    std::vector<uint16_t> h(n);
    codec::decode(spec, chunk.data(), chunk.size(), h.data(), n, type, false);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t want = type == qcclBfloat16 ? encodeRne<Bf16>(y[i]) : encodeRne<Fp16>(y[i]);
      ASSERT_EQ(h[i], want) << i;
    }
  }
  std::vector<float> acc(n);
  for (size_t i = 0; i < n; ++i) acc[i] = float(i % 5) - 2.0f;
  acc[0] = -0.0f;
  std::vector<float> before = acc;
  codec::decode(spec, chunk.data(), chunk.size(), acc.data(), n, qcclFloat32, true);
  for (size_t i = 0; i < n; ++i) {
    const float want = y[i] == 0 && floatBits(y[i]) == 0 ? before[i] : before[i] + y[i];
    ASSERT_EQ(floatBits(acc[i]), floatBits(want)) << i;
  }
}

// Sparse EF: every element is eventually sent, so over T steps the mean's error still falls as
// |e_T| / T once each element's turn has come (every ~1/D steps for density D).
TEST(TopkCodec, ErrorFeedbackSendsEverythingEventually) {
  const CodecSpec spec = codec::parseCodecSpec("topk0.01+int2");
  const size_t n = 2 * 4096 + 77;
  const std::vector<float> x = studentT3(n, 4);
  std::vector<float> residual(n, 0.0f);
  codec::EncodeParams params;
  params.residual = residual.data();
  std::vector<double> sum(n, 0.0);
  std::vector<double> err;
  for (int t = 1; t <= 3000; ++t) {
    const std::vector<float> y = decodeVec(spec, encodeVec(spec, x, params), n);
    for (size_t i = 0; i < n; ++i) sum[i] += y[i];
    if (t == 1 || t == 300 || t == 3000) {
      double e2 = 0;
      for (size_t i = 0; i < n; ++i) e2 += (sum[i] / t - x[i]) * (sum[i] / t - x[i]);
      err.push_back(std::sqrt(e2) / l2(x));
    }
  }
  EXPECT_GT(err[0], 0.5) << "one step sends 1%: most of x is missing";
  EXPECT_LT(err[2], err[1] / 5) << "not in the 1/T regime between T=300 and T=3000";
  EXPECT_LT(err[2], 0.01);
}

// A chunk whose index field is not a valid selection is refused before the output is touched.
TEST(TopkCodec, MalformedIndexFieldsAreRefused) {
  for (const char* name : {"topk0.01+int2/b256", "topk0.2+bf16/b256"}) {  // a list, a bitmap
    const CodecSpec spec = codec::parseCodecSpec(name);
    const size_t n = 600;
    const std::vector<uint8_t> good = encodeVec(spec, studentT3(n, 2));
    const codec::TopkLayout l = codec::topkLayout(spec, n);
    for (int damage = 0; damage < 3; ++damage) {
      std::vector<uint8_t> bad = good;
      uint8_t* field = bad.data() + l.indexOffset + l.field.bytes;  // block 1
      if (damage == 0) field[0] ^= 0x01;  // a position changes or a bit appears
      if (damage == 1) std::fill(field, field + l.field.bytes, uint8_t(0xFF));
      if (damage == 2) std::fill(field, field + l.field.bytes, uint8_t(0x00));
      std::vector<float> out(n, 7.0f);
      try {
        codec::decode(spec, bad.data(), bad.size(), out.data(), n, qcclFloat32, false);
        // Flipping one bit of a list may leave a valid (different) selection: allowed.
        EXPECT_EQ(damage, 0) << name << ": accepted damage " << damage;
      } catch (const CodecError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidUsage);
        EXPECT_NE(std::string(e.what()).find("index field"), std::string::npos) << e.what();
        EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 7.0f; }));
      }
    }
  }
}

TEST(TopkCodec, HeaderFieldsAreChecked) {
  const CodecSpec spec = codec::parseCodecSpec("topk0.01+int4");
  const std::vector<uint8_t> chunk = encodeVec(spec, gaussian(5000, 1));
  std::vector<float> out(5000);
  // Another density or value format is another codec.
  for (const char* other : {"topk0.02+int4", "topk0.01+int8", "int4"}) {
    EXPECT_THROW(decodeVec(codec::parseCodecSpec(other), chunk, 5000), CodecError) << other;
  }
  std::vector<uint8_t> bad = chunk;
  bad[14] = 0;  // value format none
  EXPECT_THROW(decodeVec(spec, bad, 5000), CodecError);
  // A dense chunk with topk's bytes set: reserved bytes not zero.
  std::vector<uint8_t> dense = encodeVec(codec::parseCodecSpec("int4"), gaussian(100, 1));
  dense[48] = 1;
  EXPECT_THROW(decodeVec(codec::parseCodecSpec("int4"), dense, 100), CodecError);
  EXPECT_THROW(codec::requireDeviceKernels(spec), CodecError);
  EXPECT_NO_THROW(codec::requireDeviceKernels(codec::parseCodecSpec("int4")));
}

}  // namespace
}  // namespace qccl::test
