#include "src/comm/p2p_calls.h"

#include <algorithm>
#include <thread>

#include "src/comm/call_guard.h"
#include "src/common/deadline.h"

namespace qccl {

namespace {

struct Group {
  int depth = 0;
  std::vector<std::pair<qcclComm*, P2pMessage>> deferred;
};
thread_local Group group;

}  // namespace

uint64_t postMessage(qcclComm& comm, const P2pMessage& message) {
  uint64_t id = 0;
  guarded(comm, [&] { id = comm.p2p.post(comm, message); });
  return id;
}

bool testMessage(qcclComm& comm, uint64_t id) {
  bool done = false;
  guarded(comm, [&] { done = comm.p2p.test(comm, id); });
  return done;
}

void cancelMessage(qcclComm& comm, uint64_t id) {
  std::lock_guard<std::mutex> lock(comm.callMutex);
  if (comm.transport) comm.p2p.cancel(comm, id);
}

void waitMessages(const std::vector<std::pair<qcclComm*, uint64_t>>& messages) {
  std::vector<std::pair<qcclComm*, uint64_t>> open = messages;
  std::chrono::milliseconds timeout{0};
  for (const auto& m : open) timeout = std::max(timeout, m.first->settings.timeout);
  const Deadline deadline = Deadline::after(timeout);
  auto cancelOpen = [&] {
    for (const auto& m : open) cancelMessage(*m.first, m.second);
  };
  unsigned idle = 0;
  while (!open.empty()) {
    bool progressed = false;
    for (size_t i = 0; i < open.size();) {
      bool done = false;
      try {
        done = testMessage(*open[i].first, open[i].second);
      } catch (...) {
        open.erase(open.begin() + long(i));
        cancelOpen();
        throw;
      }
      if (done) {
        open.erase(open.begin() + long(i));
        progressed = true;
      } else {
        ++i;
      }
    }
    if (progressed) {
      idle = 0;
    } else if (deadline.passed()) {
      cancelOpen();
      qcclComm& first = *open.front().first;
      guarded(first, [&] {
        throwError(qcclTimeout,
                   "rank %d: QCCL_TIMEOUT passed waiting for %zu point-to-point "
                   "message(s)",
                   first.rank, open.size());
      });
    } else if (++idle > 10) {  // as collectives wait: yield the core, then sleep a little
      if (idle > 1000) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      } else {
        std::this_thread::yield();
      }
    }
  }
}

void sendOrReceive(qcclComm& comm, const P2pMessage& message) {
  if (group.depth > 0) {
    usableComm(&comm);
    group.deferred.emplace_back(&comm, message);
    return;
  }
  waitMessages({{&comm, postMessage(comm, message)}});
}

void groupStart() { ++group.depth; }

void groupEnd() {
  if (group.depth == 0) throwError(qcclInvalidUsage, "qcclGroupEnd without qcclGroupStart");
  if (--group.depth > 0) return;
  std::vector<std::pair<qcclComm*, P2pMessage>> deferred;
  deferred.swap(group.deferred);
  std::vector<std::pair<qcclComm*, uint64_t>> posted;
  try {
    for (const auto& [comm, message] : deferred)
      posted.emplace_back(comm, postMessage(*comm, message));
  } catch (...) {
    for (const auto& [comm, id] : posted) cancelMessage(*comm, id);
    throw;
  }
  waitMessages(posted);
}

}  // namespace qccl
