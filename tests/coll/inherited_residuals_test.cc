// A communicator made by qcclCommShrink or qcclCommGrow starts from each member's worker residuals
// of its parent (the same keys and shapes, the same bytes) and from zero server residuals; a key
// whose last call failed midway, a key whose worker residuals hold partial sums (ring), and a new
// rank start from nothing (docs/ERROR_FEEDBACK.md, "Across a shrink or a grow").
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

// One key's residuals as qcclEfStateSave writes them (docs/ERROR_FEEDBACK.md, the format).
struct SavedResiduals {
  uint64_t signature = 0;
  std::vector<uint8_t> worker, server;
};

template <class T>
T take(const std::vector<uint8_t>& bytes, size_t& at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

std::map<uint64_t, SavedResiduals> savedResiduals(qcclComm_t comm) {
  size_t size = 0;
  EXPECT_EQ(qcclEfStateSize(comm, &size), qcclSuccess) << qcclGetLastError(nullptr);
  std::vector<uint8_t> bytes(size);
  EXPECT_EQ(qcclEfStateSave(comm, bytes.data(), size), qcclSuccess) << qcclGetLastError(nullptr);
  size_t at = 4 + 4 * 4;  // magic, version, ranks, rank, residual dtype (fp32 here)
  const uint64_t count = take<uint64_t>(bytes, at);
  std::map<uint64_t, SavedResiduals> entries;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t key = take<uint64_t>(bytes, at);
    SavedResiduals& e = entries[key];
    e.signature = take<uint64_t>(bytes, at);
    const uint64_t workers = take<uint64_t>(bytes, at), servers = take<uint64_t>(bytes, at);
    e.worker.assign(bytes.begin() + long(at), bytes.begin() + long(at + workers * 4));
    at += workers * 4;
    e.server.assign(bytes.begin() + long(at), bytes.begin() + long(at + servers * 4));
    at += servers * 4;
  }
  return entries;
}

CommOptions int4WithErrorFeedback(const char* algorithm = "sra") {  // sra: both stages
  CommOptions options;
  options.codec = "int4";
  options.algorithm = algorithm;
  return options;
}

// Two compressed allreduces of values int4 cannot hold, under two keys: residuals to carry.
void compressedSteps(int rank, qcclComm_t comm, std::vector<float>& x, std::vector<float>& y) {
  for (int i = 0; i < 2; ++i) {
    for (size_t k = 0; k < x.size(); ++k) x[k] = 0.01f * float(k % 97) + 0.37f * float(rank + i);
    for (uint64_t key : {11u, 12u}) {
      qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
      call.efKey = key;
      RANK_EXPECT(qcclAllReduceEx(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr,
                                  &call) == qcclSuccess,
                  rank, qcclGetLastError(nullptr));
    }
  }
}

// The child holds the parent's worker residuals, key for key, and no server residuals.
void expectWorkersInherited(int rank, const std::map<uint64_t, SavedResiduals>& parent,
                            qcclComm_t child) {
  const std::map<uint64_t, SavedResiduals> inherited = savedResiduals(child);
  RANK_EXPECT(inherited.size() == 2 && parent.size() == 2, rank,
              inherited.size() << " keys inherited of " << parent.size());
  for (const auto& [key, from] : parent) {
    auto it = inherited.find(key);
    RANK_EXPECT(it != inherited.end(), rank, "key " << key << " not inherited");
    if (it == inherited.end()) continue;
    RANK_EXPECT(!from.worker.empty() && !from.server.empty(), rank, "the parent had no residuals");
    RANK_EXPECT(it->second.signature == from.signature && it->second.worker == from.worker, rank,
                "key " << key << ": the worker residuals differ from the parent's");
    RANK_EXPECT(it->second.server.empty(), rank, "key " << key << ": server residuals inherited");
  }
}

TEST(InheritedResiduals, ShrinkKeepsEachSurvivorsWorkerResiduals) {
  runRanks(3, int4WithErrorFeedback(), [](int r, qcclComm_t comm) {
    std::vector<float> x(1000), y(1000);
    compressedSteps(r, comm, x, y);
    if (r == 2) return;  // left out on purpose
    const std::map<uint64_t, SavedResiduals> parent = savedResiduals(comm);
    int lost = 2;
    qcclComm_t child = nullptr;
    ASSERT_EQ(qcclCommShrink(comm, &lost, 1, &child, nullptr, QCCL_SHRINK_DEFAULT), qcclSuccess)
        << qcclGetLastError(nullptr);
    expectWorkersInherited(r, parent, child);
    compressedSteps(r, child, x, y);  // and the child's calls go on from them
    qcclCommDestroy(child);
  });
}

TEST(InheritedResiduals, RingsPartialSumResidualsStartFromZero) {
  runRanks(3, int4WithErrorFeedback("ring"), [](int r, qcclComm_t comm) {
    std::vector<float> x(1000), y(1000);
    compressedSteps(r, comm, x, y);
    if (r == 2) return;
    RANK_EXPECT(savedResiduals(comm).size() == 2, r, "no residuals to leave behind");
    int lost = 2;
    qcclComm_t child = nullptr;
    ASSERT_EQ(qcclCommShrink(comm, &lost, 1, &child, nullptr, QCCL_SHRINK_DEFAULT), qcclSuccess)
        << qcclGetLastError(nullptr);
    RANK_EXPECT(savedResiduals(child).empty(), r, "a ring's residuals were carried");
    qcclCommDestroy(child);
  });
}

TEST(InheritedResiduals, AKeyWhoseCallFailedMidwayStartsFromZero) {
  runRanks(3, int4WithErrorFeedback(), [](int r, qcclComm_t comm) {
    std::vector<float> x(1000), y(1000);
    compressedSteps(r, comm, x, y);
    if (r == 2) return;  // gone (its communicator destroyed) before the next call
    std::map<uint64_t, SavedResiduals> parent = savedResiduals(comm);
    qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
    call.efKey = 12;
    RANK_EXPECT(qcclAllReduceEx(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr,
                                &call) == qcclRemoteError,
                r, "the call without rank 2: " << qcclGetLastError(nullptr));
    qcclComm_t child = nullptr;
    ASSERT_EQ(qcclCommShrink(comm, nullptr, 0, &child, nullptr, QCCL_SHRINK_DEFAULT), qcclSuccess)
        << qcclGetLastError(nullptr);
    const std::map<uint64_t, SavedResiduals> inherited = savedResiduals(child);
    RANK_EXPECT(inherited.size() == 1 && inherited.count(11) == 1 &&
                    inherited.at(11).worker == parent.at(11).worker,
                r, "inherited " << inherited.size() << " keys, not key 11 alone");
    qcclCommDestroy(child);
  });
}

TEST(InheritedResiduals, GrowKeepsTheMembersAndTheNewRankStartsFromNothing) {
  std::promise<qcclUniqueId> posted;
  std::shared_future<qcclUniqueId> id = posted.get_future().share();
  std::thread joiner([&id] {
    const qcclUniqueId grown = id.get();
    qcclConfig_t config = configOf(int4WithErrorFeedback());
    qcclComm_t comm = nullptr;
    ASSERT_EQ(qcclCommGrow(nullptr, 3, &grown, 2, &comm, &config), qcclSuccess)
        << qcclGetLastError(nullptr);
    EXPECT_TRUE(savedResiduals(comm).empty());
    std::vector<float> x(1000), y(1000);
    compressedSteps(2, comm, x, y);
    qcclCommDestroy(comm);
  });
  runRanks(2, int4WithErrorFeedback(), [&posted](int r, qcclComm_t comm) {
    std::vector<float> x(1000), y(1000);
    compressedSteps(r, comm, x, y);
    const std::map<uint64_t, SavedResiduals> parent = savedResiduals(comm);
    qcclUniqueId grown;
    if (r == 0) {
      ASSERT_EQ(qcclCommGetUniqueId(comm, &grown), qcclSuccess) << qcclGetLastError(nullptr);
      posted.set_value(grown);
    }
    qcclComm_t child = nullptr;
    ASSERT_EQ(qcclCommGrow(comm, 3, r == 0 ? &grown : nullptr, -1, &child, nullptr), qcclSuccess)
        << qcclGetLastError(nullptr);
    expectWorkersInherited(r, parent, child);
    compressedSteps(r, child, x, y);
    qcclCommDestroy(child);
  });
  joiner.join();
}

}  // namespace
}  // namespace qccl::test
