// Reduce-scatter and allgather, exact and compressed, on 1, 2, 3, 4 and 7 ranks; broadcast,
// all-to-all and barrier (always exact).
#include <gtest/gtest.h>

#include <mutex>

#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

struct Case {
  std::string codec;
  int ranks;
  size_t count;  // per rank
  qcclDataType_t dtype;
  bool inPlace;
};

std::string caseName(const Case& c) {
  return specTestName(c.codec) + "_" + dtypeName(c.dtype) + "_" + std::to_string(c.ranks) +
         "ranks_count" + std::to_string(c.count) + (c.inPlace ? "_inplace" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

class ReduceScatter : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceScatter, MatchesReference) {
  const Case& c = GetParam();
  const int n = c.ranks;
  const codec::CodecSpec spec = codec::parseCodecSpec(c.codec);
  const bool compressed = spec.format != codec::Format::None && c.dtype != qcclInt32 && n > 1;
  std::vector<std::vector<double>> inputs(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    std::vector<uint8_t> bytes;
    makeInput(r, c.count * size_t(n), c.dtype, bytes, inputs[size_t(r)]);
  }
  std::mutex mutex;
  CommOptions options;
  options.codec = c.codec.c_str();
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    std::vector<uint8_t> in;
    std::vector<double> values;
    makeInput(r, c.count * size_t(n), c.dtype, in, values);
    std::vector<uint8_t> out(c.count * typeBytes(c.dtype));
    uint8_t* recv = c.inPlace ? in.data() + size_t(r) * out.size() : out.data();
    const qcclResult_t rc =
        qcclReduceScatter(in.data(), recv, c.count, c.dtype, qcclSum, comm, nullptr);
    std::lock_guard<std::mutex> lock(mutex);
    if (rc != qcclSuccess) {
      ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
      return;
    }
    // Share r: the sum over ranks of their share r; encoded contributions within their bound.
    for (size_t i = 0; i < c.count; ++i) {
      const size_t g = size_t(r) * c.count + i;
      double exact = 0, allowed = 0;
      for (int p = 0; p < n; ++p) {
        exact += inputs[size_t(p)][g];
        allowed += 1e-6 * std::fabs(inputs[size_t(p)][g]);
      }
      if (compressed) {
        std::vector<std::vector<double>> contributions(static_cast<size_t>(n));
        for (int p = 0; p < n; ++p) contributions[size_t(p)] = inputs[size_t(p)];
        const size_t block = spec.block ? spec.block : c.count + 1;
        const size_t start = size_t(r) * c.count + i / block * block;
        const size_t end = std::min(size_t(r + 1) * c.count, start + block);
        for (int p = 0; p < n; ++p) {
          if (p == r) continue;
          double amax = 0;
          for (size_t k = start; k < end; ++k)
            amax = std::max(amax, std::fabs(inputs[size_t(p)][k]));
          allowed += elementBound(spec, inputs[size_t(p)][g], amax, amax);
        }
      }
      allowed += outputRounding(c.dtype, exact);
      const double got = readValue(recv, c.dtype, i);
      if (std::fabs(got - exact) > allowed) {
        ADD_FAILURE() << caseName(c) << " rank " << r << " element " << i << ": " << got << " vs "
                      << exact;
        return;
      }
    }
  });
}

std::vector<Case> reduceScatterCases() {
  std::vector<Case> all;
  for (int n : {1, 2, 3, 4, 7}) {
    for (size_t count : {size_t(1), size_t(7), size_t(1031)}) {
      for (qcclDataType_t t : {qcclFloat32, qcclBfloat16, qcclFloat16, qcclInt32}) {
        all.push_back({"none", n, count, t, count == 7});
      }
      for (const char* codec : {"fp8e4m3", "int8", "mxfp4", "nvfp4", "bf16", "sign1"}) {
        all.push_back({codec, n, count, qcclFloat32, count == 1});
      }
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, ReduceScatter, ::testing::ValuesIn(reduceScatterCases()),
                         [](const auto& info) { return caseName(info.param); });

class Allgather : public ::testing::TestWithParam<Case> {};

TEST_P(Allgather, EveryShardEverywhere) {
  const Case& c = GetParam();
  const int n = c.ranks;
  const codec::CodecSpec spec = codec::parseCodecSpec(c.codec);
  const bool compressed = spec.format != codec::Format::None && c.dtype != qcclInt32;
  std::vector<std::vector<uint8_t>> results(static_cast<size_t>(n));
  std::mutex mutex;
  CommOptions options;
  options.codec = c.codec.c_str();
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    std::vector<uint8_t> shard;
    std::vector<double> values;
    makeInput(r, c.count, c.dtype, shard, values);
    std::vector<uint8_t> out(shard.size() * size_t(n), 0);
    if (c.inPlace) std::memcpy(out.data() + size_t(r) * shard.size(), shard.data(), shard.size());
    const void* send = c.inPlace ? out.data() + size_t(r) * shard.size() : shard.data();
    const qcclResult_t rc = qcclAllGather(send, out.data(), c.count, c.dtype, comm, nullptr);
    std::lock_guard<std::mutex> lock(mutex);
    if (rc != qcclSuccess) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
    results[size_t(r)] = out;
  });
  for (int r = 1; r < n; ++r) ASSERT_EQ(results[size_t(r)], results[0]) << "replicas differ";
  for (int p = 0; p < n; ++p) {
    std::vector<uint8_t> bytes;
    std::vector<double> x;
    makeInput(p, c.count, c.dtype, bytes, x);
    const uint8_t* got = results[0].data() + size_t(p) * bytes.size();
    if (!compressed) {
      ASSERT_EQ(0, std::memcmp(got, bytes.data(), bytes.size())) << "shard " << p;
      continue;
    }
    const std::vector<float> xf(x.begin(), x.end());
    const std::vector<double> b = bounds(spec, xf);
    for (size_t i = 0; i < c.count; ++i) {
      ASSERT_LE(std::fabs(readValue(got, c.dtype, i) - x[i]), b[i] + outputRounding(c.dtype, x[i]))
          << caseName(c) << " shard " << p << " element " << i;
    }
  }
}

std::vector<Case> allgatherCases() {
  std::vector<Case> all;
  for (int n : {1, 2, 3, 4, 7}) {
    for (size_t count : {size_t(1), size_t(7), size_t(1031)}) {
      for (qcclDataType_t t : {qcclFloat32, qcclBfloat16, qcclInt32})
        all.push_back({"none", n, count, t, count == 7});
      for (const char* codec : {"fp8e4m3", "int4", "nvfp4", "mxfp8"}) {
        all.push_back({codec, n, count, qcclFloat32, count == 7});
      }
      all.push_back({"fp8e4m3", n, count, qcclFloat16, false});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, Allgather, ::testing::ValuesIn(allgatherCases()),
                         [](const auto& info) { return caseName(info.param); });

TEST(ExactCollectives, BroadcastAlltoallBarrier) {
  for (int n : {1, 2, 3, 4, 7}) {
    std::mutex mutex;
    runRanks(n, CommOptions{}, [&](int r, qcclComm_t comm) {
      const size_t count = 1001;
      std::vector<int32_t> data(count);
      for (size_t i = 0; i < count; ++i) data[i] = int32_t(i * 7 + size_t(r));
      std::vector<int32_t> got(count, -1);
      const int root = n - 1;
      qcclResult_t rc =
          qcclBroadcast(data.data(), got.data(), count, qcclInt32, root, comm, nullptr);
      std::vector<int32_t> blocks(count * size_t(n)), exchanged(count * size_t(n), -1);
      for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = int32_t(size_t(r) * 100000 + i);
      if (rc == qcclSuccess)
        rc = qcclAlltoAll(blocks.data(), exchanged.data(), count, qcclInt32, comm, nullptr);
      if (rc == qcclSuccess) rc = qcclBarrier(comm, nullptr);
      std::lock_guard<std::mutex> lock(mutex);
      if (rc != qcclSuccess) {
        ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
        return;
      }
      for (size_t i = 0; i < count; ++i) {
        if (got[i] != int32_t(i * 7 + size_t(root))) {
          ADD_FAILURE() << "broadcast element " << i;
          return;
        }
      }
      for (int p = 0; p < n; ++p) {
        for (size_t i = 0; i < count; ++i) {
          if (exchanged[size_t(p) * count + i] !=
              int32_t(size_t(p) * 100000 + size_t(r) * count + i)) {
            ADD_FAILURE() << "alltoall block " << p << " element " << i;
            return;
          }
        }
      }
    });
  }
}

}  // namespace
}  // namespace qccl::test
