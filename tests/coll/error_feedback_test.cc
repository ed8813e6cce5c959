// Error feedback across calls: the time-averaged output of repeated compressed allreduces of the
// same inputs converges to the exact result (10x closer at T = 100 than at T = 1), and the state
// survives save, reset and load.
#include <gtest/gtest.h>

#include <mutex>

#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

class EfAllreduce : public ::testing::TestWithParam<std::tuple<std::string, std::string, size_t>> {
};

std::string efCaseName(const ::testing::TestParamInfo<EfAllreduce::ParamType>& info) {
  return specTestName(std::get<0>(info.param)) + "_" + std::get<1>(info.param) + "_count" +
         std::to_string(std::get<2>(info.param));
}

TEST_P(EfAllreduce, TimeAverageConvergesToExactMean) {
  const auto& [codec, algorithm, count] = GetParam();
  const int n = 4;
  std::vector<double> exact(count, 0.0);
  for (int r = 0; r < n; ++r) {
    std::vector<uint8_t> bytes;
    std::vector<double> x;
    makeInput(r, count, qcclFloat32, bytes, x);
    for (size_t i = 0; i < count; ++i) exact[i] += x[i] / n;
  }
  std::vector<double> errors;  // at T = 1, 10, 100, rank 0
  std::mutex mutex;
  CommOptions options;
  options.codec = codec.c_str();
  options.algorithm = algorithm.c_str();
  options.groupSize = 2;
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    std::vector<uint8_t> in;
    std::vector<double> x;
    makeInput(r, count, qcclFloat32, in, x);
    std::vector<float> out(count);
    std::vector<double> sum(count, 0.0);
    for (int t = 1; t <= 100; ++t) {
      if (qcclAllReduce(in.data(), out.data(), count, qcclFloat32, qcclAvg, comm, nullptr) !=
          qcclSuccess) {
        std::lock_guard<std::mutex> lock(mutex);
        ADD_FAILURE() << qcclGetLastError(nullptr);
        return;
      }
      for (size_t i = 0; i < count; ++i) sum[i] += out[i];
      if (r == 0 && (t == 1 || t == 10 || t == 100)) {
        double e2 = 0, n2 = 0;
        for (size_t i = 0; i < count; ++i) {
          e2 += (sum[i] / t - exact[i]) * (sum[i] / t - exact[i]);
          n2 += exact[i] * exact[i];
        }
        errors.push_back(std::sqrt(e2 / n2));
      }
    }
  });
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_GT(errors[0], 0.0);
  EXPECT_LT(errors[2], errors[0] / 10) << codec << "/" << algorithm << ": T=1 " << errors[0]
                                       << ", T=10 " << errors[1] << ", T=100 " << errors[2];
}

INSTANTIATE_TEST_SUITE_P(Codecs, EfAllreduce,
                         ::testing::Combine(::testing::Values("fp8e4m3", "int4", "nvfp4", "mxfp4",
                                                              "fp8e5m2+sr", "int8+rht"),
                                            ::testing::Values("sra", "ring", "hier"),
                                            ::testing::Values(size_t(2053))),
                         efCaseName);

// A sparse codec sends a fifth of each block per call and error feedback the rest later: at
// 2053 elements the plan gathers (every rank's whole vector), at 65536 it runs sra, where the
// owner re-sparsifies the sum with its own residual.
INSTANTIATE_TEST_SUITE_P(Sparse, EfAllreduce,
                         ::testing::Combine(::testing::Values("topk0.2+int4/b1024"),
                                            ::testing::Values("sra"),
                                            ::testing::Values(size_t(2053), size_t(65536))),
                         efCaseName);

TEST(EfState, SaveResetLoadContinuesIdentically) {
  const int n = 3;
  const size_t count = 1500;
  std::mutex mutex;
  CommOptions options;
  options.codec = "int4";
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    auto fail = [&](const std::string& what) {
      std::lock_guard<std::mutex> lock(mutex);
      ADD_FAILURE() << "rank " << r << ": " << what;
    };
    std::vector<uint8_t> in;
    std::vector<double> x;
    makeInput(r, count, qcclFloat32, in, x);
    auto step = [&]() {
      std::vector<float> out(count);
      if (qcclAllReduce(in.data(), out.data(), count, qcclFloat32, qcclSum, comm, nullptr) !=
          qcclSuccess) {
        fail(qcclGetLastError(nullptr));
      }
      return out;
    };
    const std::vector<float> first = step();
    for (int t = 0; t < 4; ++t) step();
    size_t bytes = 0;
    if (qcclEfStateSize(comm, &bytes) != qcclSuccess || bytes == 0) return fail("state size");
    std::vector<uint8_t> saved(bytes);
    if (qcclEfStateSave(comm, saved.data(), saved.size()) != qcclSuccess) return fail("save");
    std::vector<std::vector<float>> after;
    for (int t = 0; t < 3; ++t) after.push_back(step());
    // Reset: the residuals are zero again, so the next call is the first call once more.
    if (qcclEfReset(comm, 0) != qcclSuccess) return fail("reset");
    if (step() != first) fail("after reset, the output is not the first call's");
    // Load: the three calls after the save come out again, bit for bit.
    if (qcclEfStateLoad(comm, saved.data(), saved.size()) != qcclSuccess) return fail("load");
    for (int t = 0; t < 3; ++t) {
      if (step() != after[size_t(t)]) fail("after load, call " + std::to_string(t) + " differs");
    }
    // A state that is not one, or from another rank, is refused and changes nothing.
    std::vector<uint8_t> garbage(bytes, 0x5A);
    if (qcclEfStateLoad(comm, garbage.data(), garbage.size()) != qcclInvalidArgument)
      fail("garbage loaded");
    if (qcclEfStateSave(comm, saved.data(), 10) != qcclInvalidArgument) fail("short save accepted");
  });
}

}  // namespace
}  // namespace qccl::test
