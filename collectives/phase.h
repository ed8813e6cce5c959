// One phase of a collective: receives and sends posted together, then waited for until the
// deadline. A receive whose size or content does not match is recorded in the context as a usage
// error and counts as done, so that every rank still finishes every phase (and learns of the
// disagreement) instead of waiting for messages that will not come.
#pragma once

#include <vector>

#include "collectives/context.h"

namespace qccl::coll {

class Phase {
 public:
  explicit Phase(Context& context) : context_(context), tag_(context.nextTag()) {}
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

  // peer: index in the context's group.
  void send(int peer, const void* data, size_t bytes);
  void recv(int peer, void* data, size_t bytes);
  // Throws Error: qcclTimeout past the deadline, qcclRemoteError for a lost peer, qcclInvalidUsage
  // when the communicator was aborted.
  void wait();

 private:
  struct Pending {
    transport::Transport::Request request;
    int peer;  // global rank
    bool isRecv;
  };
  Context& context_;
  uint32_t tag_;
  std::vector<Pending> pending_;
};

}  // namespace qccl::coll
