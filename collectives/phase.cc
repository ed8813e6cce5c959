#include "collectives/phase.h"

#include <thread>

#include "common/error.h"

namespace qccl::coll {

Phase::~Phase() {
  for (const Pending& p : pending_) context_.transport->cancel(p.request);
}

void Phase::send(int peer, const void* data, size_t bytes) {
  const int global = context_.group.ranks[size_t(peer)];
  pending_.push_back({context_.transport->isend(global, tag_, data, bytes), global, false});
  if (context_.wire) context_.wire->sent += bytes;
}

void Phase::recv(int peer, void* data, size_t bytes) {
  const int global = context_.group.ranks[size_t(peer)];
  pending_.push_back({context_.transport->irecv(global, tag_, data, bytes), global, true});
  if (context_.wire) context_.wire->received += bytes;
}

void Phase::wait() {
  unsigned idle = 0;
  while (!pending_.empty()) {
    bool progressed = false;
    for (size_t i = 0; i < pending_.size();) {
      bool done = false;
      try {
        done = context_.transport->test(pending_[i].request);
      } catch (const Error& e) {
        if (e.code() != qcclInvalidUsage) {
          pending_.erase(pending_.begin() + long(i));
          throw;
        }
        context_.recordUsageError(e.what());
        done = true;
      }
      if (done) {
        pending_.erase(pending_.begin() + long(i));
        progressed = true;
      } else {
        ++i;
      }
    }
    if (pending_.empty()) break;
    if (context_.aborted && context_.aborted->load()) {
      throwError(qcclInvalidUsage, "the communicator was aborted during the call");
    }
    if (context_.deadline.passed()) {
      std::string peers;
      for (const Pending& p : pending_) {
        peers += (peers.empty() ? "" : ", ") + std::string(p.isRecv ? "from " : "to ") +
                 std::to_string(p.peer);
      }
      throwError(qcclTimeout, "rank %d: QCCL_TIMEOUT passed waiting for messages (%s)",
                 context_.globalRank(), peers.c_str());
    }
    // Spin while messages flow; back off when nothing happens for a while.
    idle = progressed ? 0 : idle + 1;
    if (idle > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace qccl::coll
