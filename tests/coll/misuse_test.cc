// Bad input and misuse of communicators and collectives: a clear error, never a crash or a hang.
// Ranks that disagree (count, dtype, op, codec) all get qcclInvalidUsage and stay usable.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

std::string lastError() { return qcclGetLastError(nullptr); }

TEST(Misuse, BadArgumentsOnOneRank) {
  runRanks(1, CommOptions{}, [&](int, qcclComm_t comm) {
    float x[4] = {1, 2, 3, 4}, y[4];
    EXPECT_EQ(qcclAllReduce(nullptr, y, 4, qcclFloat32, qcclSum, comm, nullptr),
              qcclInvalidArgument);
    EXPECT_NE(lastError().find("sendbuff is NULL"), std::string::npos) << lastError();
    EXPECT_EQ(qcclAllReduce(x, nullptr, 4, qcclFloat32, qcclSum, comm, nullptr),
              qcclInvalidArgument);
    EXPECT_EQ(qcclAllReduce(x, y, size_t(1) << 60, qcclFloat32, qcclSum, comm, nullptr),
              qcclInvalidArgument);
    EXPECT_NE(lastError().find("absurd"), std::string::npos) << lastError();
    EXPECT_EQ(qcclAllReduce(x, y, 4, qcclDataType_t(42), qcclSum, comm, nullptr),
              qcclInvalidArgument);
    EXPECT_NE(lastError().find("invalid datatype"), std::string::npos) << lastError();
    EXPECT_EQ(qcclAllReduce(x, y, 4, qcclFloat32, qcclRedOp_t(9), comm, nullptr),
              qcclInvalidArgument);
    EXPECT_NE(lastError().find("invalid reduction op"), std::string::npos) << lastError();
    EXPECT_EQ(qcclAllReduce(x, y, 4, qcclFloat32, qcclSum, comm, reinterpret_cast<cudaStream_t>(8)),
              qcclInvalidUsage);
    EXPECT_EQ(qcclAllReduce(x, y, 4, qcclFloat32, qcclSum, nullptr, nullptr), qcclInvalidArgument);
    EXPECT_EQ(
        qcclAllReduce(x, y, 4, qcclFloat32, qcclSum, reinterpret_cast<qcclComm_t>(x), nullptr),
        qcclInvalidArgument);
    EXPECT_NE(lastError().find("not a communicator"), std::string::npos) << lastError();
    EXPECT_EQ(qcclBroadcast(x, y, 4, qcclFloat32, 3, comm, nullptr), qcclInvalidArgument);
    qcclCallConfig_t bad = QCCL_CALL_CONFIG_INITIALIZER;
    bad.magic = 0;
    EXPECT_EQ(qcclAllReduceEx(x, y, 4, qcclFloat32, qcclSum, comm, nullptr, &bad),
              qcclInvalidArgument);
    qcclCallConfig_t unknownCodec = QCCL_CALL_CONFIG_INITIALIZER;
    unknownCodec.codec = "fp7";
    EXPECT_EQ(qcclAllReduceEx(x, y, 4, qcclFloat32, qcclSum, comm, nullptr, &unknownCodec),
              qcclInvalidArgument);
    EXPECT_NE(lastError().find("unknown format"), std::string::npos) << lastError();
    int count = 0;
    EXPECT_EQ(qcclCommCount(comm, nullptr), qcclInvalidArgument);
    EXPECT_EQ(qcclCommCount(comm, &count), qcclSuccess);
    EXPECT_EQ(count, 1);
    // Still usable after all of that.
    EXPECT_EQ(qcclAllReduce(x, y, 4, qcclFloat32, qcclSum, comm, nullptr), qcclSuccess);
  });
}

TEST(Misuse, BadInit) {
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  qcclComm_t comm = nullptr;
  EXPECT_EQ(qcclCommInitRank(nullptr, 2, id, 0), qcclInvalidArgument);
  EXPECT_EQ(qcclCommInitRank(&comm, 2, id, 2), qcclInvalidArgument);
  EXPECT_EQ(qcclCommInitRank(&comm, 0, id, 0), qcclInvalidArgument);
  qcclUniqueId garbage;
  std::memset(&garbage, 7, sizeof garbage);
  EXPECT_EQ(qcclCommInitRank(&comm, 1, garbage, 0), qcclInvalidArgument);
  EXPECT_NE(lastError().find("qcclGetUniqueId"), std::string::npos) << lastError();
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.codec = "nvfp4/b64";
  EXPECT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclInvalidArgument);
  EXPECT_NE(lastError().find("fixed at 16"), std::string::npos) << lastError();
  config = QCCL_CONFIG_INITIALIZER;
  config.transport = "carrier-pigeon";
  EXPECT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclInvalidArgument);
  config = QCCL_CONFIG_INITIALIZER;
  config.magic = 1;
  EXPECT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclInvalidArgument);
  EXPECT_EQ(qcclGetUniqueId(nullptr), qcclInvalidArgument);
}

TEST(Misuse, CallsAfterDestroy) {
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.transport = "local";
  qcclComm_t comm = nullptr;
  ASSERT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclSuccess);
  ASSERT_EQ(qcclCommDestroy(comm), qcclSuccess);
  float x = 1, y = 0;
  EXPECT_EQ(qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr), qcclInvalidUsage);
  EXPECT_NE(lastError().find("destroyed"), std::string::npos) << lastError();
  EXPECT_EQ(qcclCommDestroy(comm), qcclInvalidUsage);
  EXPECT_EQ(qcclBarrier(comm, nullptr), qcclInvalidUsage);
}

// One rank disagrees; every rank must return qcclInvalidUsage, and a correct call after works.
void expectDisagreementDetected(const char* codec,
                                const std::function<void(int, qcclComm_t)>& wrong, int n = 4) {
  std::mutex mutex;
  CommOptions options;
  options.codec = codec;
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    wrong(r, comm);
    std::vector<float> x(3000, float(r + 1)), y(3000);
    const qcclResult_t after =
        qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr);
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(after, qcclSuccess) << "rank " << r
                                  << " unusable after the disagreement: " << lastError();
  });
}

// Exact calls of a few elements run in one round, larger ones in two (allreduce_exact.cc): ranks
// that disagree within either, or across the two, all find out.
TEST(Misuse, RanksDisagreeOnCount) {
  for (const char* codec : {"none", "fp8e4m3"}) {
    for (const auto& [odd, usual] :
         {std::pair<size_t, size_t>{4000, 5000}, {100, 200}, {100, 5000}}) {
      expectDisagreementDetected(codec, [odd = odd, usual = usual](int r, qcclComm_t comm) {
        std::vector<float> x(usual, 1.0f), y(usual);
        const size_t count = r == 2 ? odd : usual;
        const qcclResult_t rc =
            qcclAllReduce(x.data(), y.data(), count, qcclFloat32, qcclSum, comm, nullptr);
        EXPECT_EQ(rc, qcclInvalidUsage) << "rank " << r << ": " << qcclGetLastError(nullptr);
      });
    }
  }
}

// With 4 KiB segments, exact calls of more than 4096 fp32 elements on 4 ranks are pipelined
// (exact_pipeline.h), after an agreement round: ranks that disagree within that path, or across
// it and the framed or one-round paths, all find out; so do reduce-scatter and allgather.
TEST(Misuse, RanksDisagreeAcrossThePipelinedExactPath) {
  setenv("QCCL_SEGMENT_BYTES", "4096", 1);  // read at init, before the rank threads start
  for (const auto& [odd, usual] :
       {std::pair<size_t, size_t>{100, 20000}, {3000, 20000}, {20000, 30000}, {20000, 3000}}) {
    expectDisagreementDetected("none", [odd = odd, usual = usual](int r, qcclComm_t comm) {
      std::vector<float> x(std::max(odd, usual), 1.0f), y(x.size());
      const size_t count = r == 1 ? odd : usual;
      EXPECT_EQ(qcclAllReduce(x.data(), y.data(), count, qcclFloat32, qcclSum, comm, nullptr),
                qcclInvalidUsage)
          << "rank " << r << ": " << qcclGetLastError(nullptr);
    });
  }
  for (const auto& [odd, usual] : {std::pair<size_t, size_t>{500, 2000}, {2000, 3000}}) {
    expectDisagreementDetected("none", [odd = odd, usual = usual](int r, qcclComm_t comm) {
      std::vector<float> x(4 * std::max(odd, usual), 1.0f), y(x.size());
      const size_t count = r == 3 ? odd : usual;
      EXPECT_EQ(qcclReduceScatter(x.data(), y.data(), count, qcclFloat32, qcclSum, comm, nullptr),
                qcclInvalidUsage)
          << "rank " << r << ": " << qcclGetLastError(nullptr);
      EXPECT_EQ(qcclAllGather(x.data(), y.data(), count, qcclFloat32, comm, nullptr),
                qcclInvalidUsage)
          << "rank " << r << ": " << qcclGetLastError(nullptr);
    });
  }
  unsetenv("QCCL_SEGMENT_BYTES");
}

// Small exact calls on 4 and 8 ranks go by recursive doubling or halving (allreduce_doubling.cc),
// where a rank hears from log2 n partners only: ranks that disagree within those paths, or across
// them and the one-round (a bf16 call), two-round, pipelined or compressed paths, all find out,
// whichever rank is the odd one.
TEST(Misuse, RanksDisagreeAcrossRecursiveDoubling) {
  const std::pair<size_t, size_t> counts[] = {
      // {usual, odd}: doubling 100, halving 3000, 5000
      {100, 1000}, {100, 3000}, {3000, 5000}, {3000, 100}, {100, 20000}, {3000, 20000}};
  for (const char* segmentBytes : {"4096", "1048576"}) {  // 20000 elements: pipelined, two rounds
    setenv("QCCL_SEGMENT_BYTES", segmentBytes, 1);
    for (const int n : {4, 8}) {
      for (const int oddRank : {0, n - 1, n / 2 - 1}) {
        for (const auto& [usual, odd] : counts) {
          expectDisagreementDetected(
              "none",
              [usual = usual, odd = odd, oddRank](int r, qcclComm_t comm) {
                std::vector<float> x(20000, 1.0f), y(x.size());
                const size_t count = r == oddRank ? odd : usual;
                EXPECT_EQ(
                    qcclAllReduce(x.data(), y.data(), count, qcclFloat32, qcclSum, comm, nullptr),
                    qcclInvalidUsage)
                    << "rank " << r << ": " << qcclGetLastError(nullptr);
              },
              n);
        }
        for (const size_t count : {size_t(100), size_t(3000)}) {
          expectDisagreementDetected(
              "none",
              [count, oddRank](int r, qcclComm_t comm) {
                std::vector<float> x(count, 1.0f), y(x.size());
                const qcclDataType_t dtype = r == oddRank ? qcclBfloat16 : qcclFloat32;
                EXPECT_EQ(qcclAllReduce(x.data(), y.data(), count, dtype, qcclSum, comm, nullptr),
                          qcclInvalidUsage)
                    << "rank " << r << ": " << qcclGetLastError(nullptr);
              },
              n);
          expectDisagreementDetected(
              "fp8e4m3",
              [count, oddRank](int r, qcclComm_t comm) {
                std::vector<float> x(count, 1.0f), y(x.size());
                qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
                config.flags = r == oddRank ? 0 : QCCL_CALL_EXACT;
                EXPECT_EQ(qcclAllReduceEx(x.data(), y.data(), count, qcclFloat32, qcclSum, comm,
                                          nullptr, &config),
                          qcclInvalidUsage)
                    << "rank " << r << ": " << qcclGetLastError(nullptr);
              },
              n);
        }
      }
    }
  }
  unsetenv("QCCL_SEGMENT_BYTES");
}

TEST(Misuse, RanksDisagreeOnCodec) {
  // fp8e4m3 and int8 chunks have the same size: only the header tells them apart.
  expectDisagreementDetected("fp8e4m3", [](int r, qcclComm_t comm) {
    std::vector<float> x(5000, 1.0f), y(5000);
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.codec = r == 1 ? "int8" : nullptr;
    const qcclResult_t rc =
        qcclAllReduceEx(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr, &config);
    EXPECT_EQ(rc, qcclInvalidUsage) << "rank " << r;
    EXPECT_NE(std::string(qcclGetLastError(nullptr)).find("codec"), std::string::npos)
        << qcclGetLastError(nullptr);
  });
}

TEST(Misuse, RanksDisagreeOnOpOrDtype) {
  expectDisagreementDetected("none", [](int r, qcclComm_t comm) {
    std::vector<float> x(64, 1.0f), y(64);
    const qcclResult_t rc = qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32,
                                          r == 3 ? qcclMax : qcclSum, comm, nullptr);
    EXPECT_EQ(rc, qcclInvalidUsage) << "rank " << r;
  });
  expectDisagreementDetected("none", [](int r, qcclComm_t comm) {
    std::vector<int32_t> x(64, 1), y(64);
    const qcclResult_t rc = qcclAllReduce(x.data(), y.data(), x.size(),
                                          r == 0 ? qcclUint32 : qcclInt32, qcclSum, comm, nullptr);
    EXPECT_EQ(rc, qcclInvalidUsage) << "rank " << r;
  });
}

TEST(Misuse, MissingPeerTimesOutAndFailsTheCommunicator) {
  CommOptions options;
  options.timeoutMs = 500;
  std::mutex mutex;
  runRanks(2, options, [&](int r, qcclComm_t comm) {
    if (r == 1) {  // stays, but never calls: rank 0 must give up within the timeout
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return;
    }
    float x = 1, y = 0;
    qcclResult_t async = qcclInternalError;
    EXPECT_EQ(qcclCommGetAsyncError(comm, &async), qcclSuccess);
    EXPECT_EQ(async, qcclSuccess);
    const auto start = std::chrono::steady_clock::now();
    const qcclResult_t rc = qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(rc, qcclTimeout) << qcclGetLastError(nullptr);
    EXPECT_LT(seconds, 5.0);
    EXPECT_EQ(qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr), qcclInvalidUsage);
    EXPECT_NE(lastError().find("failed earlier"), std::string::npos) << lastError();
    EXPECT_EQ(qcclCommGetAsyncError(comm, &async), qcclSuccess);
    EXPECT_EQ(async, qcclTimeout);
    EXPECT_EQ(qcclCommGetAsyncError(comm, nullptr), qcclInvalidArgument);
  });
}

TEST(Misuse, AbortUnblocksACallInFlight) {
  std::mutex mutex;
  runRanks(2, CommOptions{}, [&](int r, qcclComm_t comm) {
    if (r == 1) {  // present but silent, so the call waits until it is aborted
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return;
    }
    std::atomic<bool> started{false};
    std::thread aborter([&] {
      while (!started) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      EXPECT_EQ(qcclCommAbort(comm), qcclSuccess);
    });
    float x = 1, y = 0;
    started = true;
    const auto start = std::chrono::steady_clock::now();
    const qcclResult_t rc = qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    aborter.join();
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_NE(rc, qcclSuccess);
    EXPECT_LT(seconds, 5.0) << "abort did not unblock the call";
    EXPECT_EQ(qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr), qcclInvalidUsage);
  });
}

}  // namespace
}  // namespace qccl::test
