// The shared-mask collectives (docs/ALGORITHMS.md, "Shared-mask collectives") on 3 ranks, against a
// replay through the codec's own encode and decode: the values under the mask reduced (or
// gathered) as defined, error feedback kept at the whole buffer's coordinates across calls whose
// masks differ, every rank's all-gather bitwise the same, nothing written outside the mask, fewer
// bytes than the dense call; a mask that differs between ranks refused on every rank with nothing
// written; misuse refused with a message. The mask exchange: every rank's shard mask on every rank,
// in either form (bitmap, positions), polled or waited for.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "codecs/codec.h"
#include "codecs/codec_spec.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

constexpr int kRanks = 3;
constexpr size_t kShard = 1000;
constexpr float kUntouched = -12345.0f;  // what recv holds outside the mask

std::vector<float> values(int rank, int call, size_t count) {
  std::mt19937 gen(uint32_t(1000 * call + rank));
  std::normal_distribution<float> normal;
  std::vector<float> v(count);
  for (float& x : v) x = normal(gen);
  return v;
}

// A mask of about `density` of n elements; `seed` picks which.
std::vector<uint8_t> makeMask(size_t n, double density, uint32_t seed) {
  std::mt19937 gen(seed);
  std::bernoulli_distribution pick(density);
  std::vector<uint8_t> mask((n + 7) / 8, 0);
  for (size_t i = 0; i < n; ++i) {
    if (pick(gen)) mask[i / 8] |= uint8_t(1u << (i % 8));
  }
  return mask;
}

bool bit(const std::vector<uint8_t>& mask, size_t i) { return (mask[i / 8] >> (i % 8)) & 1u; }

codec::CodecSpec spec(const char* name) { return codec::parseCodecSpec(name); }

// One rank's masked values of `x` at positions [base, base + count) encoded with the residual
// `e` (same coordinates; updated), decoded.
std::vector<float> sent(const codec::CodecSpec& s, const std::vector<float>& x,
                        std::vector<float>& e, const std::vector<uint8_t>& mask, size_t maskBase,
                        size_t base, size_t count) {
  std::vector<float> run, residual;
  std::vector<size_t> at;
  for (size_t i = 0; i < count; ++i) {
    if (bit(mask, maskBase + i)) {
      run.push_back(x[base + i]);
      residual.push_back(e[base + i]);
      at.push_back(base + i);
    }
  }
  if (run.empty()) return run;
  std::vector<uint8_t> chunk(codec::encodedSize(s, run.size(), qcclFloat32));
  codec::EncodeParams params;
  params.residual = residual.data();
  codec::encode(s, run.data(), run.size(), qcclFloat32, chunk.data(), chunk.size(), params);
  std::vector<float> decoded(run.size());
  codec::decode(s, chunk.data(), chunk.size(), decoded.data(), run.size(), qcclFloat32, false);
  for (size_t j = 0; j < at.size(); ++j) e[at[j]] = residual[j];
  return decoded;
}

qcclCallConfig_t keyed(uint64_t key) {
  qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
  config.efKey = key;
  return config;
}

TEST(MaskedCollectives, ReduceScatterAvgWithErrorFeedbackAcrossChangingMasks) {
  CommOptions options;
  options.codec = "int4";
  const codec::CodecSpec s = spec("int4");
  const size_t whole = kRanks * kShard;
  // The replay: every rank's residual over the whole buffer, and each rank's expected shard.
  std::vector<std::vector<float>> residuals(kRanks, std::vector<float>(whole, 0.0f));
  std::vector<std::vector<std::vector<float>>> expected(2);
  std::vector<std::vector<uint8_t>> masks = {makeMask(whole, 0.1, 1), makeMask(whole, 0.1, 2)};
  for (int call = 0; call < 2; ++call) {
    for (int r = 0; r < kRanks; ++r) {
      std::vector<float> sum;
      for (int from = 0; from < kRanks; ++from) {
        // The own share is added in full precision (its residual untouched), as in the dense call.
        std::vector<float> d;
        if (from == r) {
          for (size_t i = 0; i < kShard; ++i) {
            if (bit(masks[size_t(call)], r * kShard + i))
              d.push_back(values(r, call, whole)[r * kShard + i]);
          }
        } else {
          d = sent(s, values(from, call, whole), residuals[size_t(from)], masks[size_t(call)],
                   r * kShard, r * kShard, kShard);
        }
        if (sum.empty()) sum.assign(d.size(), 0.0f);
        for (size_t j = 0; j < d.size(); ++j) sum[j] += d[j];
      }
      for (float& v : sum) v /= float(kRanks);
      expected[size_t(call)].push_back(sum);
    }
  }
  runRanks(kRanks, options, [&](int rank, qcclComm_t comm) {
    const qcclCallConfig_t config = keyed(77);
    for (int call = 0; call < 2; ++call) {
      const std::vector<float> x = values(rank, call, whole);
      std::vector<float> out(kShard, kUntouched);
      const qcclResult_t result =
          qcclMaskedReduceScatter(x.data(), out.data(), kShard, qcclFloat32, qcclAvg,
                                  masks[size_t(call)].data(), comm, nullptr, &config);
      RANK_EXPECT(result == qcclSuccess, rank, qcclGetLastError(nullptr));
      size_t j = 0;
      for (size_t i = 0; i < kShard; ++i) {
        if (bit(masks[size_t(call)], rank * kShard + i)) {
          const float want = expected[size_t(call)][size_t(rank)][j++];
          RANK_EXPECT(std::memcmp(&out[i], &want, 4) == 0, rank,
                      "call " << call << " element " << i << ": " << out[i] << " not " << want);
        } else {
          RANK_EXPECT(out[i] == kUntouched, rank, "element " << i << " written outside the mask");
        }
      }
    }
  });
}

TEST(MaskedCollectives, ExactReduceScatterSumsTheMaskedValues) {
  const size_t whole = kRanks * kShard;
  const std::vector<uint8_t> mask = makeMask(whole, 0.3, 5);
  runRanks(kRanks, CommOptions{}, [&](int rank, qcclComm_t comm) {
    const std::vector<float> x = values(rank, 0, whole);
    std::vector<float> out(kShard, kUntouched);
    RANK_EXPECT(qcclMaskedReduceScatter(x.data(), out.data(), kShard, qcclFloat32, qcclSum,
                                        mask.data(), comm, nullptr, nullptr) == qcclSuccess,
                rank, qcclGetLastError(nullptr));
    for (size_t i = 0; i < kShard; ++i) {
      const size_t at = rank * kShard + i;
      float want = kUntouched;
      if (bit(mask, at)) {
        want = values(0, 0, whole)[at];
        for (int r = 1; r < kRanks; ++r) want += values(r, 0, whole)[at];
      }
      RANK_EXPECT(std::memcmp(&out[i], &want, 4) == 0, rank, "element " << i);
    }
  });
}

TEST(MaskedCollectives, AllGatherIsTheSameOnEveryRankAndSendsFewerBytes) {
  CommOptions options;
  options.codec = "fp8e4m3";
  const codec::CodecSpec s = spec("fp8e4m3");
  const size_t shard = 20 * kShard;  // chunk headers (64 bytes) small beside the values
  const size_t whole = kRanks * shard;
  const std::vector<uint8_t> mask = makeMask(whole, 0.1, 9);
  std::vector<std::vector<float>> results(kRanks);
  std::vector<uint64_t> maskedBytes(kRanks), denseBytes(kRanks);
  runRanks(kRanks, options, [&](int rank, qcclComm_t comm) {
    const std::vector<float> x = values(rank, 0, shard);
    std::vector<float> out(whole, kUntouched), dense(whole);
    uint64_t before = 0, after = 0;
    qcclCommWireBytes(comm, &before, nullptr);
    RANK_EXPECT(qcclMaskedAllGather(x.data(), out.data(), shard, qcclFloat32, mask.data(), comm,
                                    nullptr, nullptr) == qcclSuccess,
                rank, qcclGetLastError(nullptr));
    qcclCommWireBytes(comm, &after, nullptr);
    maskedBytes[size_t(rank)] = after - before;
    RANK_EXPECT(
        qcclAllGather(x.data(), dense.data(), shard, qcclFloat32, comm, nullptr) == qcclSuccess,
        rank, qcclGetLastError(nullptr));
    qcclCommWireBytes(comm, &before, nullptr);
    denseBytes[size_t(rank)] = before - after;
    results[size_t(rank)] = out;
  });
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(std::memcmp(results[size_t(r)].data(), results[0].data(), whole * 4), 0)
        << "rank " << r << "'s result differs from rank 0's";
    EXPECT_LT(maskedBytes[size_t(r)] * 8, denseBytes[size_t(r)])
        << maskedBytes[size_t(r)] << " masked bytes against " << denseBytes[size_t(r)] << " dense";
    std::vector<float> e(shard, 0.0f);
    const std::vector<float> d = sent(s, values(r, 0, shard), e, mask, r * shard, 0, shard);
    size_t j = 0;
    for (size_t i = 0; i < shard; ++i) {
      const float got = results[0][r * shard + i];
      const float want = bit(mask, r * shard + i) ? d[j++] : kUntouched;
      EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << "shard " << r << " element " << i;
    }
  }
}

TEST(MaskedCollectives, AMaskThatDiffersIsRefusedOnEveryRankWithNothingWritten) {
  CommOptions options;
  options.codec = "int4";
  const size_t whole = kRanks * kShard;
  runRanks(kRanks, options, [&](int rank, qcclComm_t comm) {
    std::vector<uint8_t> mask = makeMask(whole, 0.2, 3);
    if (rank == 1) mask[17] ^= 0x4;
    const std::vector<float> x = values(rank, 0, whole);
    std::vector<float> out(kShard, kUntouched), gathered(whole, kUntouched);
    RANK_EXPECT(qcclMaskedReduceScatter(x.data(), out.data(), kShard, qcclFloat32, qcclSum,
                                        mask.data(), comm, nullptr, nullptr) == qcclInvalidUsage,
                rank, "a differing mask was not refused");
    RANK_EXPECT(std::strstr(qcclGetLastError(nullptr), "mask differs") != nullptr, rank,
                qcclGetLastError(nullptr));
    RANK_EXPECT(qcclMaskedAllGather(x.data(), gathered.data(), kShard, qcclFloat32, mask.data(),
                                    comm, nullptr, nullptr) == qcclInvalidUsage,
                rank, "a differing mask was not refused");
    for (float v : out) RANK_EXPECT(v == kUntouched, rank, "written after a refusal");
    for (float v : gathered) RANK_EXPECT(v == kUntouched, rank, "written after a refusal");
    size_t stateBytes = 0, emptyBytes = 0;
    qcclEfStateSize(comm, &stateBytes);
    qcclEfReset(comm, 0);
    qcclEfStateSize(comm, &emptyBytes);
    RANK_EXPECT(stateBytes == emptyBytes, rank, "residuals made by a refused call");
    // The communicator still works: the same mask everywhere goes through.
    const std::vector<uint8_t> same = makeMask(whole, 0.2, 3);
    RANK_EXPECT(qcclMaskedReduceScatter(x.data(), out.data(), kShard, qcclFloat32, qcclSum,
                                        same.data(), comm, nullptr, nullptr) == qcclSuccess,
                rank, qcclGetLastError(nullptr));
  });
}

// Each rank's shard mask (an odd shard size, so that shards start inside a byte) exchanged at a
// dense and a sparse density: the bitmap form and the positions form.
TEST(MaskExchange, EveryShardMaskReachesEveryRankInEitherForm) {
  constexpr size_t shard = 1001;
  for (const double density : {0.5, 0.01}) {
    std::vector<std::vector<uint8_t>> own(kRanks), results(kRanks);
    std::vector<uint64_t> sent(kRanks);
    for (int r = 0; r < kRanks; ++r) own[size_t(r)] = makeMask(shard, density, uint32_t(40 + r));
    runRanks(kRanks, CommOptions{}, [&](int rank, qcclComm_t comm) {
      std::vector<uint8_t> mask((kRanks * shard + 7) / 8, 0xa5);
      qcclMaskExchange_t exchange = nullptr;
      uint64_t before = 0, after = 0;
      qcclCommWireBytes(comm, &before, nullptr);
      RANK_EXPECT(qcclMaskExchangeStart(own[size_t(rank)].data(), mask.data(), shard, 7, comm,
                                        &exchange) == qcclSuccess,
                  rank, qcclGetLastError(nullptr));
      if (rank == 0) {  // polled, as a training step would between its own work
        int done = 0;
        while (!done) {
          RANK_EXPECT(qcclMaskExchangeTest(exchange, &done) == qcclSuccess, rank,
                      qcclGetLastError(nullptr));
        }
      } else {
        RANK_EXPECT(qcclMaskExchangeWait(exchange) == qcclSuccess, rank, qcclGetLastError(nullptr));
      }
      qcclCommWireBytes(comm, &after, nullptr);
      sent[size_t(rank)] = after - before;
      results[size_t(rank)] = mask;
    });
    for (int r = 0; r < kRanks; ++r) {
      for (int s = 0; s < kRanks; ++s) {
        for (size_t i = 0; i < shard; ++i) {
          ASSERT_EQ(bit(results[size_t(r)], s * shard + i), bit(own[size_t(s)], i))
              << "density " << density << ": rank " << r << "'s copy of rank " << s
              << "'s mask, element " << i;
        }
      }
      if (density < 0.1) {  // about 10 positions of 4 bytes, not a 126-byte bitmap, per peer
        EXPECT_LT(sent[size_t(r)], 2 * (kRanks - 1) * (shard / 8)) << "rank " << r;
      }
    }
  }
}

TEST(MaskExchange, ShardSizesThatDifferAreRefused) {
  runRanks(2, CommOptions{}, [&](int rank, qcclComm_t comm) {
    const size_t shard = rank == 0 ? 64 : 72;
    std::vector<uint8_t> own(shard / 8, 0xff), mask(2 * 72 / 8, 0);
    qcclMaskExchange_t exchange = nullptr;
    RANK_EXPECT(
        qcclMaskExchangeStart(own.data(), mask.data(), shard, 3, comm, &exchange) == qcclSuccess,
        rank, qcclGetLastError(nullptr));
    RANK_EXPECT(qcclMaskExchangeWait(exchange) == qcclInvalidUsage, rank, "not refused");
    RANK_EXPECT(std::strstr(qcclGetLastError(nullptr), "agree on the shard size") != nullptr, rank,
                qcclGetLastError(nullptr));
  });
}

TEST(MaskedCollectives, MisuseIsRefusedWithAMessage) {
  runRanks(1, CommOptions{}, [&](int rank, qcclComm_t comm) {
    std::vector<float> x(8, 1.0f), out(8, 0.0f);
    const uint8_t mask = 0xff;
    auto refused = [&](qcclResult_t result, qcclResult_t code, const char* words) {
      RANK_EXPECT(result == code, rank, "not refused: " << words);
      RANK_EXPECT(std::strstr(qcclGetLastError(nullptr), words) != nullptr, rank,
                  qcclGetLastError(nullptr));
    };
    refused(qcclMaskedReduceScatter(x.data(), out.data(), 8, qcclFloat32, qcclSum, nullptr, comm,
                                    nullptr, nullptr),
            qcclInvalidArgument, "mask is NULL");
    refused(qcclMaskedReduceScatter(x.data(), out.data(), 8, qcclFloat32, qcclMax, &mask, comm,
                                    nullptr, nullptr),
            qcclInvalidArgument, "not qcclSum or qcclAvg");
    refused(qcclMaskedAllGather(x.data(), out.data(), 8, qcclInt32, &mask, comm, nullptr, nullptr),
            qcclInvalidArgument, "not fp32, bf16 or fp16");
    qcclCallConfig_t delta = QCCL_CALL_CONFIG_INITIALIZER;
    delta.flags = QCCL_CALL_DELTA;
    refused(qcclMaskedAllGather(x.data(), out.data(), 8, qcclFloat32, &mask, comm, nullptr, &delta),
            qcclInvalidArgument, "do not apply");
    for (float v : out) RANK_EXPECT(v == 0.0f, rank, "written by a refused call");
  });
}

}  // namespace
}  // namespace qccl::test
