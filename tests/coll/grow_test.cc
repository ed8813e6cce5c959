// qcclCommGrow on ranks as threads: a communicator grows 1 -> 2 -> 4 in a loop of collectives, each
// new rank's first result correct; a process with a wrong secret is refused while the group grows;
// and the errors of bad input, the same on every member.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

qcclConfig_t configFor(const char* transport) {
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.transport = transport;
  config.codec = "none";
  config.timeoutMs = 20000;
  return config;
}

// Where the member that made a grow's id hands it to the new ranks (an application's store).
class IdBoard {
 public:
  void post(int size, const qcclUniqueId& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    ids_[size_t(size)] = id;
    posted_.notify_all();
  }
  qcclUniqueId await(int size) {
    std::unique_lock<std::mutex> lock(mutex_);
    posted_.wait(lock, [&] { return ids_[size_t(size)].has_value(); });
    return *ids_[size_t(size)];
  }

 private:
  std::mutex mutex_;
  std::condition_variable posted_;
  std::optional<qcclUniqueId> ids_[8];
};

// One step of the loop: an exact allreduce of (rank + 1 + step) everywhere, checked against its
// sum over the ranks.
void stepAndCheck(int rank, qcclComm_t comm, int step) {
  int size = 0;
  qcclCommCount(comm, &size);
  std::vector<float> x(777, float(rank + 1 + step)), y(777, -1.0f);
  RANK_EXPECT(qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr) ==
                  qcclSuccess,
              rank, "step " << step << ": " << qcclGetLastError(nullptr));
  const float sum = float(size * (size + 1) / 2 + size * step);
  RANK_EXPECT(y == std::vector<float>(x.size(), sum), rank,
              "step " << step << " on " << size << " ranks gave " << y[0] << ", not " << sum);
}

// The growth plan: before step 3 the group grows from 1 to 2 ranks, before step 6 from 2 to 4.
constexpr int kSteps = 9;
int sizeAfter(int step) { return step < 3 ? 1 : step < 6 ? 2 : 4; }

// A rank's loop from `step` on, growing its communicator where the plan says (destroying what it
// grew from, but not `comm`); rank 0 makes each grow's id and starts the new ranks with `spawn`.
void runFrom(int rank, qcclComm_t comm, int step, IdBoard& board,
             const std::function<void(int rank, int step)>& spawn) {
  const qcclComm_t first = comm;
  for (; step < kSteps; ++step) {
    const int size = sizeAfter(step);
    int before = 0;
    qcclCommCount(comm, &before);
    if (size != before) {
      qcclUniqueId id;
      const bool root = rank == 0;
      if (root) {
        ASSERT_EQ(qcclCommGetUniqueId(comm, &id), qcclSuccess) << qcclGetLastError(nullptr);
        board.post(size, id);
        for (int r = before; r < size; ++r) spawn(r, step);
      }
      qcclComm_t grown = nullptr;
      const qcclResult_t rc = qcclCommGrow(comm, size, root ? &id : nullptr, -1, &grown, nullptr);
      RANK_EXPECT(rc == qcclSuccess, rank, "grow to " << size << ": " << qcclGetLastError(nullptr));
      if (rc != qcclSuccess) break;
      if (comm != first) qcclCommDestroy(comm);
      comm = grown;
    }
    stepAndCheck(rank, comm, step);
  }
  if (comm != first) qcclCommDestroy(comm);
}

// A new rank: joins with the id posted for its size, then runs the loop from the step it joined
// at (its first result is that step's).
void joinAndRun(const char* transport, int rank, int step, IdBoard& board) {
  const int size = sizeAfter(step);
  const qcclUniqueId id = board.await(size);
  qcclConfig_t config = configFor(transport);
  qcclComm_t comm = nullptr;
  const qcclResult_t rc = qcclCommGrow(nullptr, size, &id, rank, &comm, &config);
  RANK_EXPECT(rc == qcclSuccess, rank, "joining: " << qcclGetLastError(nullptr));
  if (rc != qcclSuccess) return;
  runFrom(rank, comm, step, board, [](int, int) {});
  qcclCommDestroy(comm);
}

class GrowOver : public ::testing::TestWithParam<const char*> {};

TEST_P(GrowOver, OneToTwoToFourDuringALoopOfCollectives) {
  for (int trial = 0; trial < 20; ++trial) {
    IdBoard board;
    std::vector<std::thread> joiners;  // started by rank 0's thread only
    CommOptions options;
    options.transport = GetParam();
    runRanks(1, options, [&](int r, qcclComm_t comm) {
      runFrom(r, comm, 0, board, [&](int rank, int step) {
        joiners.emplace_back([&board, rank, step] { joinAndRun(GetParam(), rank, step, board); });
      });
    });
    for (std::thread& t : joiners) t.join();
    if (::testing::Test::HasFailure()) FAIL() << "trial " << trial;
  }
}

// The id with one bit of its secret changed (the secret is bytes 24 to 39, docs/API.md).
qcclUniqueId forged(const qcclUniqueId& id) {
  qcclUniqueId f = id;
  f.internal[24] = char(f.internal[24] ^ 1);
  return f;
}

// Over UCX, where the bootstrap root checks the secret (the local transport's ranks are threads of
// one process).
TEST(Grow, AProcessWithoutTheSecretIsRefusedAndTheGroupGrows) {
  for (int trial = 0; trial < 20; ++trial) {
    CommOptions options;
    options.transport = "ucx";
    std::vector<std::thread> joiners;
    runRanks(2, options, [&](int r, qcclComm_t comm) {
      qcclUniqueId id;
      if (r == 0) {
        ASSERT_EQ(qcclCommGetUniqueId(comm, &id), qcclSuccess) << qcclGetLastError(nullptr);
        std::thread impostor([&] {
          qcclConfig_t config = configFor("ucx");
          qcclComm_t comm = nullptr;
          const qcclUniqueId wrong = forged(id);
          const qcclResult_t rc = qcclCommGrow(nullptr, 3, &wrong, 2, &comm, &config);
          RANK_EXPECT(rc == qcclRemoteError, 2, "the impostor got " << rc);
        });
        impostor.join();
        joiners.emplace_back([&, id] {
          qcclConfig_t config = configFor("ucx");
          qcclComm_t comm = nullptr;
          RANK_EXPECT(qcclCommGrow(nullptr, 3, &id, 2, &comm, &config) == qcclSuccess, 2,
                      qcclGetLastError(nullptr));
          stepAndCheck(2, comm, 0);
          qcclCommDestroy(comm);
        });
      }
      qcclComm_t grown = nullptr;
      RANK_EXPECT(qcclCommGrow(comm, 3, r == 0 ? &id : nullptr, -1, &grown, nullptr) == qcclSuccess,
                  r, qcclGetLastError(nullptr));
      stepAndCheck(r, grown, 0);
      qcclCommDestroy(grown);
    });
    for (std::thread& t : joiners) t.join();
    if (::testing::Test::HasFailure()) FAIL() << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, GrowOver, ::testing::Values("local", "ucx"));

// Bad input that only the members together can see: each of them is refused with the same error,
// and the parent stays usable. grow(r, comm, &grown) makes rank r's call.
void expectEveryMemberRefused(const std::function<qcclResult_t(int, qcclComm_t, qcclComm_t*)>& grow,
                              const char* what) {
  runRanks(3, {}, [&](int r, qcclComm_t comm) {
    qcclComm_t grown = nullptr;
    const qcclResult_t rc = grow(r, comm, &grown);
    RANK_EXPECT(rc == qcclInvalidUsage && grown == nullptr, r, what << ": " << rc);
    RANK_EXPECT(std::strstr(qcclGetLastError(nullptr), what) != nullptr, r,
                qcclGetLastError(nullptr));
    stepAndCheck(r, comm, 0);
  });
}

// Rank r's grow to nranks, passing an id this communicator issued when `passes`.
qcclResult_t growWithIssuedId(qcclComm_t comm, int nranks, bool passes, qcclComm_t* grown) {
  qcclUniqueId id;
  if (passes && qcclCommGetUniqueId(comm, &id) != qcclSuccess) return qcclInternalError;
  return qcclCommGrow(comm, nranks, passes ? &id : nullptr, -1, grown, nullptr);
}

TEST(Grow, MembersThatDisagreeAreAllRefused) {
  expectEveryMemberRefused(
      [](int, qcclComm_t comm, qcclComm_t* grown) {
        return growWithIssuedId(comm, 4, false, grown);
      },
      "no member passed the unique id");
  expectEveryMemberRefused(
      [](int r, qcclComm_t comm, qcclComm_t* grown) {
        return growWithIssuedId(comm, 4, r != 1, grown);
      },
      "more than one member passed a unique id");
  expectEveryMemberRefused(
      [](int r, qcclComm_t comm, qcclComm_t* grown) {
        return growWithIssuedId(comm, r == 2 ? 5 : 4, r == 0, grown);
      },
      "the members disagree on the new size");
  expectEveryMemberRefused(
      [](int r, qcclComm_t comm, qcclComm_t* grown) {
        qcclUniqueId other;  // an id, but not one of this communicator's
        if (qcclGetUniqueId(&other) != qcclSuccess) return qcclInternalError;
        return qcclCommGrow(comm, 4, r == 1 ? &other : nullptr, -1, grown, nullptr);
      },
      "rank 1 passed a unique id that qcclCommGetUniqueId did not give");
}

TEST(Grow, BadArgumentsAreRefusedBeforeAnythingTravels) {
  runRanks(1, {}, [](int, qcclComm_t comm) {
    qcclUniqueId id;
    qcclComm_t grown = nullptr;
    EXPECT_EQ(qcclCommGrow(comm, 1, nullptr, -1, &grown, nullptr), qcclInvalidArgument);
    EXPECT_NE(std::strstr(qcclGetLastError(nullptr), "not more than"), nullptr);
    EXPECT_EQ(qcclCommGrow(comm, 2, nullptr, 0, &grown, nullptr), qcclInvalidArgument);
    EXPECT_EQ(qcclCommGrow(comm, 2, nullptr, -1, nullptr, nullptr), qcclInvalidArgument);
    EXPECT_EQ(qcclCommGrow(nullptr, 2, nullptr, 1, &grown, nullptr), qcclInvalidArgument);
    ASSERT_EQ(qcclCommGetUniqueId(comm, &id), qcclSuccess);
    EXPECT_EQ(qcclCommGrow(nullptr, 2, &id, 2, &grown, nullptr), qcclInvalidArgument);
    EXPECT_EQ(qcclCommGetUniqueId(comm, &id), qcclInvalidUsage);  // the last is unconsumed
    EXPECT_NE(std::strstr(qcclGetLastError(nullptr), "not consumed"), nullptr);
    EXPECT_EQ(qcclCommGetUniqueId(comm, nullptr), qcclInvalidArgument);
    EXPECT_EQ(grown, nullptr);
  });
}

}  // namespace
}  // namespace qccl::test
