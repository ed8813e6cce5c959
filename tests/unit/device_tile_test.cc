// The device codec kernels' tile bodies (codecs/device/), run on the CPU over every (block,
// thread) of their grid, in both thread orders and both block orders: the chunks, residuals and
// decoded values of the CPU kernels, bit for bit, for every format with +sr, +rht, /bN, fp32, bf16
// and fp16 input and output, fp32 and bf16 residuals with and without decay, decode-accumulate,
// batches of many chunks (empty and odd-sized ones among them), non-finite blocks; and a decode
// refuses every chunk whose header the host refuses, writing nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "codecs/chunk_header.h"
#include "codecs/codec.h"
#include "codecs/device/decode_tile.h"
#include "codecs/device/encode_tile.h"
#include "codecs/device/tile_dispatch.h"
#include "codecs/device/tile_plan.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {
namespace {

using namespace qccl::tile;

struct Order {
  bool reverseBlocks;
  bool reverseThreads;
};

// Runs Body over the batch's grid the way the device does, one phase for all threads at a time;
// shared memory starts out as garbage for every block.
template <class Body, class Batch>
void emulate(const Batch& b, uint64_t tiles, Order order) {
  std::vector<float> shared(Body::sharedFloats(b));
  for (uint64_t k = 0; k < tiles; ++k) {
    const uint64_t block = order.reverseBlocks ? tiles - 1 - k : k;
    std::fill(shared.begin(), shared.end(), bitsFloat(0x7fbadbadu));
    for (int phase = 0; phase < Body::phases(b); ++phase) {
      for (uint32_t t = 0; t < kTileThreads; ++t) {
        const uint32_t thread = order.reverseThreads ? kTileThreads - 1 - t : t;
        Body::run(phase, b, Cta{block, thread, kTileThreads, shared.data()});
      }
    }
  }
}

struct EmulateEncode {
  const EncodeBatch& batch;
  uint64_t tiles;
  Order order;
  template <class Q>
  void operator()() const {
    if (batch.spec.stochastic) {
      emulate<EncodeTile<Q, true>>(batch, tiles, order);
    } else {
      emulate<EncodeTile<Q, false>>(batch, tiles, order);
    }
  }
};

struct EmulateDecode {
  const DecodeBatch& batch;
  uint64_t tiles;
  Order order;
  template <class Q>
  void operator()() const {
    emulate<DecodeTile<Q>>(batch, tiles, order);
  }
};

struct Chunk {
  std::vector<uint8_t> input;
  size_t count;
  std::vector<uint8_t> residual;  // empty: no error feedback
  std::vector<uint8_t> encoded;
  uint64_t offset;
  uint32_t call;
};

constexpr uint64_t kSeed = 0x1234abcd5678ull;
constexpr uint32_t kRank = 3;

size_t width(qcclDataType_t t) { return t == qcclFloat32 ? 4 : 2; }

// The inputs: heavy-tailed values, a block of zeros, huge values, and (nonFinite) NaN and
// infinity in a few blocks, in the dtype.
std::vector<uint8_t> makeInput(size_t count, qcclDataType_t dtype, uint32_t seed, bool nonFinite) {
  std::vector<float> x = studentT3(count, seed);
  for (size_t i = 0; i < count; ++i) {
    if (i % 977 < 40) x[i] = 0.0f;
    if (i % 1531 == 5) x[i] *= 1e30f;
    if (nonFinite && i % 3001 == 17) x[i] = i % 2 ? INFINITY : NAN;
  }
  std::vector<uint8_t> bytes(count * width(dtype));
  for (size_t i = 0; i < count; ++i) {
    if (dtype == qcclFloat32) {
      std::memcpy(&bytes[4 * i], &x[i], 4);
    } else {
      const uint16_t h =
          uint16_t(dtype == qcclBfloat16 ? encodeRne<Bf16>(x[i]) : encodeRne<Fp16>(x[i]));
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

std::vector<uint8_t> makeResidual(size_t count, qcclDataType_t type, uint32_t seed) {
  const std::vector<float> e = gaussian(count, seed);
  std::vector<uint8_t> bytes(count * width(type));
  for (size_t i = 0; i < count; ++i) {
    const float v = 0.01f * e[i];
    if (type == qcclFloat32) {
      std::memcpy(&bytes[4 * i], &v, 4);
    } else {
      const uint16_t h = uint16_t(encodeRne<Bf16>(v));
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

// Encodes every chunk as the device launch layer would: batches, the nvfp4 amax pass first.
void deviceEncode(const codec::CodecSpec& spec, qcclDataType_t dtype, qcclDataType_t rtype,
                  float decay, std::vector<Chunk>& chunks, Order order) {
  EncodeBatch proto{};
  proto.spec = spec;
  proto.inputType = dtype;
  proto.residualType = rtype;
  proto.residualDecay = decay;
  proto.seed = kSeed;
  proto.rank = kRank;
  proto.tileElements = tileElementsFor(spec);
  std::vector<uint32_t> amax(chunks.size(), 0);
  std::vector<EncodeChunk> requests;
  for (size_t i = 0; i < chunks.size(); ++i) {
    Chunk& c = chunks[i];
    c.encoded.assign(codec::encodedSize(spec, c.count, dtype), 0xA5);  // garbage: all is written
    EncodeChunk e{};
    e.place.count = c.count;
    e.input = c.input.data();
    e.residual = c.residual.empty() ? nullptr : c.residual.data();
    e.out = c.encoded.data();
    e.offset = c.offset;
    e.call = c.call;
    e.amax = spec.format == codec::Format::NvFp4 ? &amax[i] : nullptr;
    requests.push_back(e);
  }
  forEachBatch(
      proto, requests, [&](const EncodeChunk&) { return dtype; },
      [&](const EncodeBatch& b, uint64_t tiles) {
        if (spec.format == codec::Format::NvFp4) emulate<AmaxTile>(b, tiles, order);
        withTileFormat(spec.format, dtype, EmulateEncode{b, tiles, order});
      });
}

// Decodes the chunks into outputs (outType, or added into fp32 when accumulate); returns the
// status word.
uint32_t deviceDecode(const codec::CodecSpec& spec, qcclDataType_t sourceType,
                      const std::vector<const uint8_t*>& in, const std::vector<size_t>& counts,
                      qcclDataType_t outType, bool accumulate,
                      std::vector<std::vector<uint8_t>>& out, Order order) {
  uint32_t status = 0, hostStatus = 0;
  DecodeBatch proto{};
  proto.spec = spec;
  proto.outType = outType;
  proto.accumulate = accumulate;
  proto.tileElements = tileElementsFor(spec);
  proto.status = &status;
  proto.hostStatus = &hostStatus;
  std::vector<DecodeChunk> requests;
  for (size_t i = 0; i < in.size(); ++i) {
    DecodeChunk d{};
    d.place.count = counts[i];
    d.in = in[i];
    d.out = out[i].data();
    d.sourceType = sourceType;
    requests.push_back(d);
  }
  forEachBatch(
      proto, requests, [&](const DecodeChunk&) { return sourceType; },
      [&](const DecodeBatch& b, uint64_t tiles) {
        withTileFormat(spec.format, sourceType, EmulateDecode{b, tiles, order});
      });
  EXPECT_EQ(status, hostStatus);
  return status;
}

struct Case {
  std::string spec;
  qcclDataType_t dtype;
  int residual;        // 0: none, else its qcclDataType_t
  float decay = 1.0f;  // error-feedback decay
};

std::string caseName(const Case& c) {
  std::string name =
      specTestName(c.spec) + "_" + dtypeName(c.dtype) + "_" +
      (c.residual ? std::string("ef_") + dtypeName(qcclDataType_t(c.residual)) : "noef");
  if (c.decay != 1.0f) name += "_decay" + std::to_string(int(c.decay * 100));
  return name;
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

class DeviceTiles : public ::testing::TestWithParam<Case> {};

TEST_P(DeviceTiles, EncodeAndDecodeAsTheCpuKernels) {
  const Case& tc = GetParam();
  const codec::CodecSpec spec = codec::parseCodecSpec(tc.spec);
  const qcclDataType_t rtype = tc.residual ? qcclDataType_t(tc.residual) : qcclFloat32;
  // Many chunks, so batches split; empty, tiny, odd and multi-tile ones.
  const size_t counts[] = {0, 1, 7,   37, 100, 2048, 4099, 10007, 3, 64, 130, 2050, 1,
                           0, 9, 517, 16, 33,  4096, 8191, 5,     2, 11, 999, 6001, 12};
  std::vector<Chunk> host, device;
  for (size_t i = 0; i < std::size(counts); ++i) {
    Chunk c;
    c.count = counts[i];
    c.input = makeInput(c.count, tc.dtype, uint32_t(17 + i), i % 3 == 1);
    if (tc.residual) c.residual = makeResidual(c.count, rtype, uint32_t(91 + i));
    c.offset = 1000 * i + (i % 5);  // offsets not divisible by 4: Philox blocks split
    c.call = uint32_t(7 + i);
    host.push_back(c);
  }
  for (size_t i = 0; i < host.size(); ++i) {
    Chunk& c = host[i];
    codec::EncodeParams p;
    p.seed = kSeed;
    p.rank = kRank;
    p.call = c.call;
    p.offset = c.offset;
    p.residual = c.residual.empty() ? nullptr : c.residual.data();
    p.residualType = rtype;
    p.residualDecay = tc.decay;
    c.encoded.resize(codec::encodedSize(spec, c.count, tc.dtype));
    codec::encode(spec, c.input.data(), c.count, tc.dtype, c.encoded.data(), c.encoded.size(), p);
  }
  for (Order order : {Order{false, false}, Order{true, true}}) {
    device.clear();
    for (size_t i = 0; i < host.size(); ++i) {
      Chunk c = host[i];
      if (tc.residual) c.residual = makeResidual(c.count, rtype, uint32_t(91 + i));
      device.push_back(c);
    }
    deviceEncode(spec, tc.dtype, rtype, tc.decay, device, order);
    for (size_t i = 0; i < host.size(); ++i) {
      ASSERT_EQ(device[i].encoded, host[i].encoded)
          << "chunk " << i << " (" << host[i].count << " elements), order " << order.reverseBlocks;
      ASSERT_EQ(device[i].residual, host[i].residual) << "residual of chunk " << i;
    }
  }

  // Decode the chunks: into each output dtype, and added into fp32.
  std::vector<const uint8_t*> in;
  std::vector<size_t> n;
  for (const Chunk& c : host) {
    in.push_back(c.encoded.data());
    n.push_back(c.count);
  }
  for (qcclDataType_t outType : {qcclFloat32, qcclBfloat16, qcclFloat16}) {
    for (bool accumulate : {false, true}) {
      if (accumulate && outType != qcclFloat32) continue;
      std::vector<std::vector<uint8_t>> want, got;
      for (size_t i = 0; i < host.size(); ++i) {
        std::vector<uint8_t> start(host[i].count * width(outType));
        for (size_t k = 0; k < start.size(); ++k) start[k] = uint8_t(k * 7 + 3);
        if (accumulate) {
          for (size_t k = 0; k < host[i].count; ++k) {
            const float v = float(k % 13) - 6.0f;
            std::memcpy(&start[4 * k], &v, 4);
          }
        }
        want.push_back(start);
        codec::decode(spec, in[i], host[i].encoded.size(), want.back().data(), host[i].count,
                      outType, accumulate);
        got.push_back(start);
      }
      EXPECT_EQ(deviceDecode(spec, tc.dtype, in, n, outType, accumulate, got, {true, false}), 0u);
      for (size_t i = 0; i < host.size(); ++i) {
        ASSERT_TRUE(got[i] == want[i]) << "decode of chunk " << i << " into " << dtypeName(outType)
                                       << (accumulate ? " +=" : "");
      }
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  const char* specs[] = {"none",        "bf16",       "fp16",         "fp8e4m3",      "fp8e5m2",
                         "mxfp8",       "mxfp4",      "nvfp4",        "fp4ue5m3",     "int8",
                         "int4",        "sign1",      "bf16+sr",      "fp16+sr",      "fp8e4m3+sr",
                         "fp8e5m2+sr",  "mxfp8+sr",   "mxfp4+sr",     "nvfp4+sr",     "fp4ue5m3+sr",
                         "int8+sr",     "int4+sr",    "fp8e4m3+rht",  "mxfp4+rht",    "nvfp4+rht",
                         "int4+rht128", "int8+rht16", "sign1+rht256", "fp4ue5m3+rht", "int4/b32",
                         "fp8e4m3/b16", "sign1/b256", "int8/b8192",   "nvfp4+sr+rht", "int2",
                         "int2+rht",    "int2/b16"};
  for (const char* s : specs) all.push_back({s, qcclFloat32, 0});
  for (const char* s : {"fp8e4m3", "nvfp4", "int4+rht", "sign1", "bf16", "mxfp4+sr"}) {
    all.push_back({s, qcclFloat32, qcclFloat32});
    all.push_back({s, qcclBfloat16, qcclFloat32});
    all.push_back({s, qcclFloat16, qcclBfloat16});
  }
  for (const char* s : {"none", "fp8e5m2+sr", "int8", "nvfp4+rht"}) {
    all.push_back({s, qcclBfloat16, 0});
    all.push_back({s, qcclFloat16, 0});
    all.push_back({s, qcclFloat32, qcclBfloat16});
  }
  for (const char* s : {"int2", "nvfp4", "int4+rht", "fp8e4m3+sr"}) {
    for (float decay : {0.0f, 0.73f}) {
      all.push_back({s, qcclFloat32, qcclFloat32, decay});
      all.push_back({s, qcclBfloat16, qcclBfloat16, decay});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Codecs, DeviceTiles, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return caseName(info.param); });

// A decode refuses every chunk the host refuses, raises the error word and writes nothing; once
// the word holds an error, nothing more is decoded.
TEST(DeviceTiles, DecodeRefusesWhatTheHostRefuses) {
  const codec::CodecSpec spec = codec::parseCodecSpec("nvfp4");
  const size_t count = 3000;
  const std::vector<uint8_t> input = makeInput(count, qcclFloat32, 5, false);
  std::vector<uint8_t> chunk(codec::encodedSize(spec, count, qcclFloat32));
  codec::encode(spec, input.data(), count, qcclFloat32, chunk.data(), chunk.size(), {});
  int refused = 0;
  for (size_t byte = 0; byte < codec::kChunkHeaderBytes; ++byte) {
    for (uint8_t flip : {uint8_t(0x01), uint8_t(0x80)}) {
      std::vector<uint8_t> bad = chunk;
      bad[byte] ^= flip;
      bool hostAccepts = true;
      try {
        codec::validateChunk(spec, bad.data(), bad.size(), count);
      } catch (const codec::CodecError&) {
        hostAccepts = false;
      }
      std::vector<std::vector<uint8_t>> out{std::vector<uint8_t>(4 * count, 0x5A)};
      const uint32_t status =
          deviceDecode(spec, qcclFloat32, {bad.data()}, {count}, qcclFloat32, false, out, {});
      if (!hostAccepts) {
        ++refused;
        EXPECT_EQ(status, kStatusChunkMismatch) << "byte " << byte << " flip " << int(flip);
        EXPECT_EQ(out[0], std::vector<uint8_t>(4 * count, 0x5A)) << "written at byte " << byte;
      }
    }
  }
  EXPECT_GT(refused, 40);
  // A chunk with a CRC32C: the host verifies it, the device refuses it.
  codec::EncodeParams crc;
  crc.crc32c = true;
  codec::encode(spec, input.data(), count, qcclFloat32, chunk.data(), chunk.size(), crc);
  std::vector<std::vector<uint8_t>> out{std::vector<uint8_t>(4 * count)};
  EXPECT_EQ(deviceDecode(spec, qcclFloat32, {chunk.data()}, {count}, qcclFloat32, false, out, {}),
            kStatusChunkMismatch);
}

TEST(DeviceTiles, TilesLargerThanTheKernelsTakeAreRefused) {
  EXPECT_THROW(tileElementsFor(codec::parseCodecSpec("int8+rht256/b8176")), codec::CodecError);
  EXPECT_EQ(tileElementsFor(codec::parseCodecSpec("int8+rht256/b8192")), 8192u);
}

}  // namespace
}  // namespace qccl::test
