// The collectives with topk codecs (docs/ALGORITHMS.md): each output bit for bit what the
// algorithm computes from the codec's own encode and decode, replayed here rank by rank: the
// gather allreduce (topk at two ranks, any codec with QCCL_ALGO=gather), sra with the owner's
// re-sparsification (three ranks and more), reduce-scatter and allgather; the allgather of
// changes. Error feedback across calls: tests/coll/error_feedback_test.cc.
#include <gtest/gtest.h>

#include <mutex>
#include <numeric>

#include "codecs/codec.h"
#include "collectives/partition.h"
#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

// The decode of one chunk encoded from count values of dtype (no residual: a first call).
std::vector<float> roundTrip(const CodecSpec& spec, const void* input, size_t count,
                             qcclDataType_t dtype) {
  std::vector<uint8_t> chunk(codec::encodedSize(spec, count, dtype));
  codec::encode(spec, input, count, dtype, chunk.data(), chunk.size(), {});
  std::vector<float> y(count);
  codec::decode(spec, chunk.data(), chunk.size(), y.data(), count, qcclFloat32, false);
  return y;
}

std::vector<uint8_t> toDtype(const std::vector<float>& v, qcclDataType_t dtype) {
  std::vector<uint8_t> out(v.size() * typeBytes(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == qcclFloat32) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else {
      const uint16_t h =
          uint16_t(dtype == qcclBfloat16 ? encodeRne<Bf16>(v[i]) : encodeRne<Fp16>(v[i]));
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

std::vector<uint8_t> input(int rank, size_t count, qcclDataType_t dtype) {
  std::vector<uint8_t> bytes;
  std::vector<double> values;
  makeInput(rank, count, dtype, bytes, values);
  return bytes;
}

float toFloat(const std::vector<uint8_t>& bytes, qcclDataType_t dtype, size_t i) {
  return float(readValue(bytes.data(), dtype, i));
}

// gather: every rank's whole vector decoded, added in rank order, Avg, the caller's dtype.
std::vector<uint8_t> gatherAllreduce(const CodecSpec& spec, int n, size_t count,
                                     qcclDataType_t dtype, qcclRedOp_t op) {
  std::vector<float> sums;
  for (int r = 0; r < n; ++r) {
    const std::vector<float> d = roundTrip(spec, input(r, count, dtype).data(), count, dtype);
    if (r == 0) {
      sums = d;
    } else {
      for (size_t i = 0; i < count; ++i) sums[i] += d[i];
    }
  }
  if (op == qcclAvg) {
    for (float& v : sums) v /= float(n);
  }
  return toDtype(sums, dtype);
}

// sra: chunk j summed by its owner (its own part exact, the others decoded) and encoded again.
std::vector<uint8_t> sraAllreduce(const CodecSpec& spec, int n, size_t count, qcclDataType_t dtype,
                                  qcclRedOp_t op) {
  std::vector<float> out(count);
  for (const auto& [j, s] : [&] {
         std::vector<std::pair<int, coll::Span>> v;
         // Chunks of whole codec blocks (and +rht runs), as collectives/chunk_codec.cc cuts them.
         const size_t unit =
             std::lcm(size_t(spec.block ? spec.block : 1), size_t(spec.rhtSize ? spec.rhtSize : 1));
         const auto spans = coll::partition(count, n, unit);
         for (int j = 0; j < n; ++j) v.push_back({j, spans[size_t(j)]});
         return v;
       }()) {
    std::vector<float> sums(s.size(), 0.0f);
    for (int p = 0; p < n; ++p) {
      const std::vector<uint8_t> x = input(p, count, dtype);
      const uint8_t* part = x.data() + s.begin * typeBytes(dtype);
      if (p == j) {
        for (size_t i = 0; i < s.size(); ++i) sums[i] += toFloat(x, dtype, s.begin + i);
      } else {
        const std::vector<float> d = roundTrip(spec, part, s.size(), dtype);
        for (size_t i = 0; i < s.size(); ++i) sums[i] += d[i];
      }
    }
    if (op == qcclAvg) {
      for (float& v : sums) v /= float(n);
    }
    const std::vector<float> d = roundTrip(spec, sums.data(), s.size(), qcclFloat32);
    std::copy(d.begin(), d.end(), out.begin() + long(s.begin));
  }
  return toDtype(out, dtype);
}

struct Case {
  std::string codec;
  std::string algorithm;
  int ranks;
  size_t count;
  qcclDataType_t dtype;
  qcclRedOp_t op;
  bool inPlace;
};

std::string caseName(const Case& c) {
  return specTestName(c.codec) + "_" + c.algorithm + "_" + dtypeName(c.dtype) + "_" + opName(c.op) +
         "_" + std::to_string(c.ranks) + "ranks" + (c.inPlace ? "_inplace" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

class SparseAllreduce : public ::testing::TestWithParam<Case> {};

TEST_P(SparseAllreduce, IsTheAlgorithmReplayed) {
  const Case& c = GetParam();
  const CodecSpec spec = codec::parseCodecSpec(c.codec);
  // The cases are sized so that topk runs gather on two ranks only (tests/unit/cost_model_test.cc
  // checks the choice itself).
  const bool gather = c.algorithm == "gather" || (spec.format == Format::TopK && c.ranks == 2);
  std::vector<std::vector<uint8_t>> outputs(size_t(c.ranks));
  std::mutex mutex;
  CommOptions options;
  options.codec = c.codec.c_str();
  options.algorithm = c.algorithm.c_str();
  runRanks(c.ranks, options, [&](int r, qcclComm_t comm) {
    std::vector<uint8_t> in = input(r, c.count, c.dtype);
    std::vector<uint8_t> out(in.size(), 0xCD);
    void* recv = c.inPlace ? in.data() : out.data();
    const qcclResult_t rc = qcclAllReduce(in.data(), recv, c.count, c.dtype, c.op, comm, nullptr);
    std::lock_guard<std::mutex> lock(mutex);
    if (rc != qcclSuccess) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
    outputs[size_t(r)] = c.inPlace ? in : out;
  });
  const std::vector<uint8_t> want = gather ? gatherAllreduce(spec, c.ranks, c.count, c.dtype, c.op)
                                           : sraAllreduce(spec, c.ranks, c.count, c.dtype, c.op);
  for (int r = 0; r < c.ranks; ++r) {
    for (size_t i = 0; i < c.count; ++i) {
      ASSERT_EQ(readValue(outputs[size_t(r)].data(), c.dtype, i),
                readValue(want.data(), c.dtype, i))
          << caseName(c) << ": rank " << r << " element " << i;
    }
    ASSERT_EQ(outputs[size_t(r)], want) << caseName(c) << ": rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, SparseAllreduce,
    ::testing::Values(Case{"topk0.01+int2", "sra", 2, 20000, qcclFloat32, qcclSum, false},
                      Case{"topk0.05+fp8e4m3", "sra", 2, 9000, qcclFloat32, qcclAvg, true},
                      Case{"topk0.1+bf16/b256", "sra", 2, 5000, qcclBfloat16, qcclSum, false},
                      Case{"topk0.01+int2", "sra", 3, 200000, qcclFloat32, qcclSum, false},
                      Case{"topk0.05+int4/b512", "sra", 4, 90001, qcclFloat16, qcclAvg, true},
                      Case{"fp8e4m3", "gather", 3, 5000, qcclFloat32, qcclSum, true},
                      Case{"int4", "gather", 4, 4099, qcclBfloat16, qcclAvg, false}),
    [](const auto& info) { return caseName(info.param); });

// A topk communicator's exact calls (other dtypes, QCCL_CALL_EXACT) never reach the codec.
TEST(SparseAllreduce, ExactCallsOnATopkCommunicator) {
  CommOptions options;
  options.codec = "topk0.01+int2";
  runRanks(2, options, [&](int r, qcclComm_t comm) {
    double local = r + 1.0, sum = 0;
    int32_t counted = r + 1, total = 0;
    qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
    exact.flags = QCCL_CALL_EXACT;
    float x = 1.5f, y = 0;
    const bool ok =
        qcclAllReduce(&local, &sum, 1, qcclFloat64, qcclSum, comm, nullptr) == qcclSuccess &&
        qcclAllReduce(&counted, &total, 1, qcclInt32, qcclSum, comm, nullptr) == qcclSuccess &&
        qcclAllReduceEx(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr, &exact) == qcclSuccess;
    if (!ok) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
    EXPECT_EQ(sum, 3.0);
    EXPECT_EQ(total, 3);
    EXPECT_EQ(y, 3.0f);
  });
}

// Reduce-scatter: share r summed in rank order (its own part exact); allgather: every shard's
// decode, the own one too.
TEST(SparseShardedCollectives, ReduceScatterAndAllgatherReplayed) {
  const int n = 3;
  const size_t count = 7000;  // per rank
  const CodecSpec spec = codec::parseCodecSpec("topk0.02+int2/b1024");
  std::vector<std::vector<uint8_t>> shares(n), gathered(n);
  std::mutex mutex;
  CommOptions options;
  options.codec = "topk0.02+int2/b1024";
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    const std::vector<uint8_t> in = input(r, count * n, qcclFloat32);
    std::vector<uint8_t> share(count * 4), all(count * n * 4);
    const bool ok = qcclReduceScatter(in.data(), share.data(), count, qcclFloat32, qcclSum, comm,
                                      nullptr) == qcclSuccess &&
                    qcclAllGather(in.data() + size_t(r) * count * 4, all.data(), count, qcclFloat32,
                                  comm, nullptr) == qcclSuccess;
    std::lock_guard<std::mutex> lock(mutex);
    if (!ok) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
    shares[size_t(r)] = share;
    gathered[size_t(r)] = all;
  });
  std::vector<float> wantGathered;
  for (int r = 0; r < n; ++r) {
    std::vector<float> sums(count, 0.0f);
    for (int p = 0; p < n; ++p) {
      const std::vector<uint8_t> x = input(p, count * n, qcclFloat32);
      const uint8_t* part = x.data() + size_t(r) * count * 4;
      if (p == r) {
        for (size_t i = 0; i < count; ++i) sums[i] += toFloat(x, qcclFloat32, r * count + i);
      } else {
        const std::vector<float> d = roundTrip(spec, part, count, qcclFloat32);
        for (size_t i = 0; i < count; ++i) sums[i] += d[i];
      }
    }
    EXPECT_EQ(shares[size_t(r)], toDtype(sums, qcclFloat32)) << "share " << r;
    const std::vector<uint8_t> x = input(r, count * n, qcclFloat32);
    const std::vector<float> d =
        roundTrip(spec, x.data() + size_t(r) * count * 4, count, qcclFloat32);
    wantGathered.insert(wantGathered.end(), d.begin(), d.end());
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(gathered[size_t(r)], toDtype(wantGathered, qcclFloat32)) << "rank " << r;
  }
}

// QCCL_CALL_DELTA (SCAPE-style parameter allgather): after an exact allgather, each call sends
// every shard's change since the output's previous contents and adds the decoded changes to it.
// Checked against a replay of that rule with the codec API, bit for bit on every rank, while the
// shards change; then, with the shards fixed, the replicas converge to them (the difference is
// the owner's error feedback).
class DeltaAllgather : public ::testing::TestWithParam<qcclDataType_t> {};

TEST_P(DeltaAllgather, AddsDecodedChangesAndConverges) {
  const qcclDataType_t dtype = GetParam();
  const int n = 3;
  const size_t count = 6000;  // per rank
  const CodecSpec spec = codec::parseCodecSpec("topk0.05+int4/b512");
  // Rank r's shard at call t: its input plus t small steps of a fixed direction; fixed after 20.
  auto shard = [&](int r, int t) {
    std::vector<uint8_t> x = input(r, count, dtype);
    const std::vector<uint8_t> step = input(r + 7, count, dtype);
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) {
      v[i] = toFloat(x, dtype, i) + 0.01f * float(std::min(t, 20)) * toFloat(step, dtype, i);
    }
    return toDtype(v, dtype);
  };
  constexpr int kCalls = 80;
  std::vector<std::vector<std::vector<uint8_t>>> outputs(size_t(kCalls + 1));
  for (auto& o : outputs) o.resize(n);
  std::mutex mutex;
  CommOptions options;
  options.codec = "topk0.05+int4/b512";
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    std::vector<uint8_t> all(count * n * typeBytes(dtype));
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.flags = QCCL_CALL_EXACT;
    for (int t = 0; t <= kCalls; ++t) {
      const std::vector<uint8_t> x = shard(r, t);
      const qcclResult_t rc =
          qcclAllGatherEx(x.data(), all.data(), count, dtype, comm, nullptr, &config);
      config.flags = QCCL_CALL_DELTA;
      std::lock_guard<std::mutex> lock(mutex);
      if (rc != qcclSuccess) {
        ADD_FAILURE() << "rank " << r << " call " << t << ": " << qcclGetLastError(nullptr);
        return;
      }
      outputs[size_t(t)][size_t(r)] = all;
    }
  });
  // The replay: the exact gather, then replica += decode(encode(shard - replica)) per shard.
  std::vector<std::vector<float>> replica(n);
  for (int q = 0; q < n; ++q) {
    const std::vector<uint8_t> x = shard(q, 0);
    for (size_t i = 0; i < count; ++i) replica[q].push_back(toFloat(x, dtype, i));
  }
  for (int t = 0; t <= kCalls; ++t) {
    std::vector<float> want;
    for (int q = 0; q < n && t > 0; ++q) {
      const std::vector<uint8_t> x = shard(q, t);
      std::vector<float> change(count);
      for (size_t i = 0; i < count; ++i) change[i] = -replica[q][i] + toFloat(x, dtype, i);
      std::vector<uint8_t> chunk(codec::encodedSize(spec, count, qcclFloat32));
      codec::encode(spec, change.data(), count, qcclFloat32, chunk.data(), chunk.size(), {});
      codec::decode(spec, chunk.data(), chunk.size(), replica[q].data(), count, qcclFloat32, true);
      // The output is rounded to its dtype, and the next change is taken against that.
      const std::vector<uint8_t> rounded = toDtype(replica[q], dtype);
      for (size_t i = 0; i < count; ++i) replica[q][i] = toFloat(rounded, dtype, i);
    }
    for (int q = 0; q < n; ++q) want.insert(want.end(), replica[q].begin(), replica[q].end());
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(outputs[size_t(t)][size_t(r)], toDtype(want, dtype))
          << "call " << t << " rank " << r;
    }
  }
  double worst = 0, largest = 0;
  for (int q = 0; q < n; ++q) {
    const std::vector<uint8_t> x = shard(q, kCalls);
    for (size_t i = 0; i < count; ++i) {
      worst = std::max(worst, double(std::fabs(replica[q][i] - toFloat(x, dtype, i))));
      largest = std::max(largest, double(std::fabs(toFloat(x, dtype, i))));
    }
  }
  EXPECT_LT(worst, 1e-3 * largest);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DeltaAllgather, ::testing::Values(qcclFloat32, qcclBfloat16),
                         [](const auto& info) { return dtypeName(info.param); });

TEST(DeltaAllgather, MisuseIsRefused) {
  CommOptions options;
  options.codec = "topk0.05+int4";
  runRanks(2, options, [&](int r, qcclComm_t comm) {
    std::vector<float> all(2 * 100), x(100, 1.0f);
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.flags = QCCL_CALL_DELTA;
    EXPECT_EQ(
        qcclAllGatherEx(all.data() + r * 100, all.data(), 100, qcclFloat32, comm, nullptr, &config),
        qcclInvalidArgument)
        << "in place";
    EXPECT_EQ(
        qcclAllReduceEx(x.data(), all.data(), 100, qcclFloat32, qcclSum, comm, nullptr, &config),
        qcclInvalidArgument)
        << "not an allgather";
    config.flags = QCCL_CALL_DELTA | QCCL_CALL_KEEP_OWN_SHARD;
    EXPECT_EQ(qcclAllGatherEx(x.data(), all.data(), 100, qcclFloat32, comm, nullptr, &config),
              qcclInvalidArgument)
        << "with keep-own-shard";
  });
  setenv("QCCL_NCCL_LIB", QCCL_STANDIN_NCCL, 1);  // the stream schedules, on host memory
  options.transport = "nccl";
  runRanks(2, options, [&](int, qcclComm_t comm) {
    std::vector<float> all(2 * 100), x(100, 1.0f);
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.flags = QCCL_CALL_DELTA;
    EXPECT_EQ(qcclAllGatherEx(x.data(), all.data(), 100, qcclFloat32, comm, nullptr, &config),
              qcclInvalidUsage)
        << "on a stream";
  });
}

}  // namespace
}  // namespace qccl::test
