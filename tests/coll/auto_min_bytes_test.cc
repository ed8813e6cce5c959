// QCCL_MIN_BYTES=auto and qcclCommPredict on in-process ranks: the model's wire bytes are the
// bytes the collectives send, its measurements are not counted as the application's, every rank
// derives the same threshold, and calls go compressed or exact by it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

constexpr int kRanks = 4;

uint64_t sentBy(qcclComm_t comm) {
  uint64_t sent = 0;
  EXPECT_EQ(qcclCommWireBytes(comm, &sent, nullptr), qcclSuccess);
  return sent;
}

// The bytes one call of `kind` with `count` sends from this rank.
uint64_t callSends(qcclComm_t comm, const char* kind, size_t count, const char* codec) {
  qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
  call.codec = codec;
  std::vector<float> in(count * kRanks, 1.0f), out(count * kRanks);
  const uint64_t before = sentBy(comm);
  const std::string k = kind;
  qcclResult_t rc;
  if (k == "allreduce") {
    rc = qcclAllReduceEx(in.data(), out.data(), count, qcclFloat32, qcclSum, comm, nullptr, &call);
  } else if (k == "reducescatter") {
    rc = qcclReduceScatterEx(in.data(), out.data(), count, qcclFloat32, qcclSum, comm, nullptr,
                             &call);
  } else {
    rc = qcclAllGatherEx(in.data(), out.data(), count, qcclFloat32, comm, nullptr, &call);
  }
  EXPECT_EQ(rc, qcclSuccess) << qcclGetLastError(comm);
  return sentBy(comm) - before;
}

TEST(AutoMinBytes, PredictedWireBytesAreWhatTheCollectivesSend) {
  CommOptions options;
  options.codec = "fp8e4m3";
  runRanks(kRanks, options, [](int rank, qcclComm_t comm) {
    for (const char* kind : {"allreduce", "reducescatter", "allgather"}) {
      for (const char* codec : {"fp8e4m3", "nvfp4", "int4+rht"}) {
        for (size_t count : {size_t(1000), size_t(300001)}) {  // uneven shares, several segments
          qcclPrediction_t p{};
          const uint64_t before = sentBy(comm);
          ASSERT_EQ(qcclCommPredict(comm, kind, count, qcclFloat32, codec, &p), qcclSuccess)
              << qcclGetLastError(comm);
          EXPECT_EQ(sentBy(comm), before) << "the model's measurements are not the application's";
          const uint64_t compressed = callSends(comm, kind, count, codec);
          const uint64_t exact = callSends(comm, kind, count, "none");
          // Rank 0 holds the largest allreduce share: the busiest rank the model describes.
          if (rank == 0 || std::string(kind) != "allreduce") {
            EXPECT_EQ(p.compressedWireBytes, compressed) << kind << " " << codec << " " << count;
            EXPECT_EQ(p.exactWireBytes, exact) << kind << " " << count;
          }
          EXPECT_GT(p.compressedSeconds, 0);
          EXPECT_GT(p.exactSeconds, 0);
        }
      }
    }
  });
}

// Ring and hier (groups of 2) change the allreduce's messages; the model follows them.
TEST(AutoMinBytes, PredictedWireBytesFollowTheAllreduceAlgorithm) {
  for (const char* algorithm : {"ring", "hier"}) {
    CommOptions options;
    options.codec = "fp8e4m3";
    options.algorithm = algorithm;
    options.groupSize = 2;
    runRanks(kRanks, options, [&](int rank, qcclComm_t comm) {
      for (const char* codec : {"fp8e4m3", "nvfp4"}) {
        for (size_t count : {size_t(1000), size_t(300001)}) {
          qcclPrediction_t p{};
          ASSERT_EQ(qcclCommPredict(comm, "allreduce", count, qcclFloat32, codec, &p), qcclSuccess)
              << qcclGetLastError(comm);
          const uint64_t sent = callSends(comm, "allreduce", count, codec);
          std::vector<uint64_t> all(kRanks);
          ASSERT_EQ(qcclAllGather(&sent, all.data(), 1, qcclUint64, comm, nullptr), qcclSuccess);
          if (rank == 0) {  // the model describes the busiest rank
            EXPECT_EQ(p.compressedWireBytes, *std::max_element(all.begin(), all.end()))
                << algorithm << " " << codec << " " << count;
          }
        }
      }
    });
  }
}

TEST(AutoMinBytes, AutoThresholdIsTheSameOnEveryRankAndDecidesEachCall) {
  CommOptions options;
  options.codec = "fp8e4m3";
  options.minBytes = QCCL_MIN_BYTES_AUTO;
  std::vector<size_t> thresholds(kRanks);
  runRanks(kRanks, options, [&](int rank, qcclComm_t comm) {
    qcclPrediction_t p{};
    ASSERT_EQ(qcclCommPredict(comm, "allreduce", 1 << 16, qcclFloat32, nullptr, &p), qcclSuccess)
        << qcclGetLastError(comm);
    thresholds[size_t(rank)] = p.autoMinBytes;
    // Sizes around the threshold go the way it says (exact sends 4 bytes per element).
    for (size_t count : {size_t(256), size_t(1) << 14, size_t(1) << 20}) {
      qcclPrediction_t at{};
      ASSERT_EQ(qcclCommPredict(comm, "allreduce", count, qcclFloat32, nullptr, &at), qcclSuccess);
      EXPECT_EQ(at.autoMinBytes, p.autoMinBytes);
      const bool compress = count * 4 >= p.autoMinBytes;
      const uint64_t sent = callSends(comm, "allreduce", count, nullptr);
      if (rank == 0) {
        EXPECT_EQ(sent, compress ? at.compressedWireBytes : at.exactWireBytes) << count;
      }
    }
  });
  for (size_t t : thresholds) EXPECT_EQ(t, thresholds[0]);
}

TEST(AutoMinBytes, PredictRefusesWhatItCannotAnswer) {
  runRanks(2, CommOptions{}, [](int, qcclComm_t comm) {
    qcclPrediction_t p{};
    EXPECT_EQ(qcclCommPredict(comm, nullptr, 10, qcclFloat32, "fp8e4m3", &p), qcclInvalidArgument);
    EXPECT_EQ(qcclCommPredict(comm, "allreduce", 10, qcclFloat32, "fp8e4m3", nullptr),
              qcclInvalidArgument);
    EXPECT_EQ(qcclCommPredict(comm, "broadcast", 10, qcclFloat32, "fp8e4m3", &p),
              qcclInvalidArgument);
    EXPECT_EQ(qcclCommPredict(comm, "allreduce", 10, qcclFloat32, "fp9", &p), qcclInvalidArgument);
    EXPECT_EQ(qcclCommPredict(comm, "allreduce", 10, qcclFloat32, nullptr, &p),
              qcclInvalidArgument);  // the communicator's codec is none
    EXPECT_EQ(qcclCommPredict(comm, "allreduce", 10, qcclInt32, "fp8e4m3", &p),
              qcclInvalidArgument);
    EXPECT_NE(std::string(qcclGetLastError(comm)), "");
  });
}

}  // namespace
}  // namespace qccl::test
