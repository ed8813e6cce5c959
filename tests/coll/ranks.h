// Runs a function on n ranks, one thread each, with communicators over the local (in-process)
// transport: the fast way to test the algorithms at many rank counts.
#pragma once

#include <qccl/qccl.h>

#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace qccl::test {

struct CommOptions {
  const char* transport = "local";  // "nccl": the stream schedules (over the stand-in NCCL)
  const char* codec = "none";
  const char* algorithm = "sra";
  size_t minBytes = 0;
  int errorFeedback = 1;
  int timeoutMs = 20000;
  int groupSize = QCCL_CONFIG_UNDEF_INT;
  const qcclUniqueId* id = nullptr;  // the unique id to use (fixes the comm's seed); else a new one
};

// A gtest expectation from a rank's thread, naming the rank (gtest's failures are thread-safe;
// the lock keeps the message's parts together).
inline std::mutex& rankFailureMutex() {
  static std::mutex m;
  return m;
}
#define RANK_EXPECT(condition, rank, what)                                       \
  do {                                                                           \
    if (!(condition)) {                                                          \
      std::lock_guard<std::mutex> lock(::qccl::test::rankFailureMutex());        \
      ADD_FAILURE() << "rank " << (rank) << ": " << what << " (" #condition ")"; \
    }                                                                            \
  } while (0)

// fn(rank, comm) on every rank; returns after all threads finished. Failures inside fn should
// use gtest's ADD_FAILURE (thread-safe) rather than ASSERT. id receives the unique id used.
inline qcclConfig_t configOf(const CommOptions& options) {
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.transport = options.transport;
  config.codec = options.codec;
  config.algorithm = options.algorithm;
  config.minBytes = options.minBytes;
  config.errorFeedback = options.errorFeedback;
  config.timeoutMs = options.timeoutMs;
  config.groupSize = options.groupSize;
  return config;
}

inline void runRanks(int n, const CommOptions& options,
                     const std::function<void(int, qcclComm_t)>& fn,
                     qcclUniqueId* idOut = nullptr) {
  qcclUniqueId id;
  if (options.id) {
    id = *options.id;
  } else if (qcclGetUniqueId(&id) != qcclSuccess) {
    throw std::runtime_error(qcclGetLastError(nullptr));
  }
  if (idOut) *idOut = id;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      qcclConfig_t config = configOf(options);
      qcclComm_t comm = nullptr;
      if (qcclCommInitRankConfig(&comm, n, id, r, &config) != qcclSuccess) {
        errors[size_t(r)] = qcclGetLastError(nullptr);
        return;
      }
      fn(r, comm);
      qcclCommDestroy(comm);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) throw std::runtime_error("init: " + e);
  }
}

}  // namespace qccl::test
