// qcclCommShrink on ranks as threads: survivors of a rank that left, of a rank that went silent,
// and of ranks left out on purpose get one smaller communicator, renumbered in order, whose
// collectives are exact; and the errors of bad input.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

// The survivor's side: shrink, then check its new rank and size and an exact allreduce of the old
// ranks (each survivor contributes old rank + 1 in every element).
void shrinkAndCheck(int oldRank, qcclComm_t comm, std::vector<int> exclude,
                    const std::vector<int>& survivors) {
  qcclComm_t child = nullptr;
  const qcclResult_t rc = qcclCommShrink(comm, exclude.data(), int(exclude.size()), &child, nullptr,
                                         QCCL_SHRINK_DEFAULT);
  RANK_EXPECT(rc == qcclSuccess, oldRank, qcclGetLastError(nullptr));
  if (rc != qcclSuccess) return;
  int rank = -1, size = -1;
  qcclCommUserRank(child, &rank);
  qcclCommCount(child, &size);
  int expectedRank = 0;
  while (survivors[size_t(expectedRank)] != oldRank) ++expectedRank;
  RANK_EXPECT(size == int(survivors.size()) && rank == expectedRank, oldRank,
              "rank " << rank << " of " << size);
  float sum = 0;
  for (int s : survivors) sum += float(s + 1);
  std::vector<float> x(1000, float(oldRank + 1)), y(1000, -1.0f);
  RANK_EXPECT(qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, child, nullptr) ==
                  qcclSuccess,
              oldRank, qcclGetLastError(nullptr));
  RANK_EXPECT(y == std::vector<float>(1000, sum), oldRank, "allreduce gave " << y[0]);
  qcclCommDestroy(child);
}

TEST(Shrink, LeavingOutHealthyRanksOnPurpose) {
  runRanks(5, {}, [](int r, qcclComm_t comm) {
    if (r == 1 || r == 3) return;  // left out: they do not call shrink
    // Each survivor may name only some of them: the union is left out.
    shrinkAndCheck(r, comm, r == 0 ? std::vector<int>{1} : std::vector<int>{3, 1}, {0, 2, 4});
  });
}

TEST(Shrink, SurvivorsOfARankThatLeftNeedNotKnowWhoItWas) {
  for (int lost : {0, 2, 3}) {
    runRanks(4, {}, [lost](int r, qcclComm_t comm) {
      if (r == lost) {
        qcclCommDestroy(comm);  // gone; runRanks' own destroy is then an error it ignores
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      float x = 1, y = 0;
      const qcclResult_t rc = qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr);
      RANK_EXPECT(rc == qcclRemoteError, r, "allreduce without rank " << lost << ": " << rc);
      std::vector<int> survivors;
      for (int s = 0; s < 4; ++s) {
        if (s != lost) survivors.push_back(s);
      }
      shrinkAndCheck(r, comm, {}, survivors);
    });
  }
}

TEST(Shrink, ARankThatNeverJoinsIsLeftOutAfterTheTimeout) {
  CommOptions options;
  options.timeoutMs = 300;
  runRanks(3, options, [](int r, qcclComm_t comm) {
    if (r == 2) {  // alive but silent, as a stopped process
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    shrinkAndCheck(r, comm, {}, {0, 1});
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RANK_EXPECT(s < 1.3, r, "took " << s << " s");
  });
}

// A rank that is alive but silent (a stopped process) makes the others' call time out; they then
// suspect it, and leave it out a short grace after they meet, not a whole QCCL_TIMEOUT later.
TEST(Shrink, ASilentRankIsLeftOutSoonAfterTheCallTimesOut) {
  CommOptions options;
  options.timeoutMs = 1000;
  runRanks(3, options, [](int r, qcclComm_t comm) {
    if (r == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3000));
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<float> x(1000, 1.0f), y(1000);
    const qcclResult_t rc =
        qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr);
    RANK_EXPECT(rc == qcclTimeout || rc == qcclRemoteError, r, "allreduce: " << rc);
    shrinkAndCheck(r, comm, {}, {0, 1});
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RANK_EXPECT(s < 2.0, r, "took " << s << " s from the call's start (QCCL_TIMEOUT 1 s)");
  });
}

TEST(Shrink, BadArguments) {
  runRanks(2, {}, [](int r, qcclComm_t comm) {
    if (r != 0) return;
    qcclComm_t child = nullptr;
    int self = 0, outside = 2;
    RANK_EXPECT(qcclCommShrink(comm, &self, 1, &child, nullptr, 0) == qcclInvalidArgument, r,
                "excluding itself");
    RANK_EXPECT(qcclCommShrink(comm, &outside, 1, &child, nullptr, 0) == qcclInvalidArgument, r,
                "out of range");
    RANK_EXPECT(qcclCommShrink(comm, nullptr, 1, &child, nullptr, 0) == qcclInvalidArgument, r,
                "NULL list");
    RANK_EXPECT(qcclCommShrink(comm, nullptr, 0, nullptr, nullptr, 0) == qcclInvalidArgument, r,
                "NULL newcomm");
    RANK_EXPECT(qcclCommShrink(comm, nullptr, 0, &child, nullptr, 0x10) == qcclInvalidArgument, r,
                "flags");
    RANK_EXPECT(child == nullptr, r, "newcomm set on failure");
    RANK_EXPECT(qcclCommShrink(nullptr, nullptr, 0, &child, nullptr, 0) == qcclInvalidArgument, r,
                "NULL comm");
  });
}

}  // namespace
}  // namespace qccl::test
