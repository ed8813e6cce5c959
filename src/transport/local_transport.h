// Ranks as threads of one process: messages are copied through shared queues. For fast tests of
// the algorithms at many rank counts; the multi-process tests use UCX and MPI.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "src/common/deadline.h"
#include "src/transport/receive_queues.h"
#include "src/transport/transport.h"
#include "src/transport/transport_kind.h"

namespace qccl::transport {

struct LocalWorld;

class LocalTransport : public Transport {
 public:
  // Joins the world named by key (all ranks pass the same key, e.g. the unique id) and waits
  // for the other ranks until the deadline.
  LocalTransport(const std::string& key, int rank, int size, const Deadline& deadline);
  ~LocalTransport() override;

  const char* name() const override { return transportName(TransportKind::Local); }
  Request isend(int peer, uint32_t tag, const void* data, size_t bytes) override;
  Request irecv(int peer, uint32_t tag, void* data, size_t bytes) override;
  bool test(Request request) override;
  void cancel(Request request) override;
  int probe(uint32_t tag) override;
  std::vector<int> pendingPeers() const override;
  bool peerFailed(int peer) const override;

 private:
  struct Receive {
    int peer;
    uint32_t tag;
    void* data;
    size_t bytes;
    bool delivered = false;
    size_t sentBytes = 0;  // what the matched message held
  };
  // Hands queued messages from (peer, tag) to that source's receives in the order they were
  // posted, as MPI and UCX match. Called with the world's lock held.
  void deliver(int peer, uint32_t tag);

  std::shared_ptr<LocalWorld> world_;
  std::string key_;
  std::unordered_map<Request, Receive> receives_;
  ReceiveQueues<std::pair<int, uint32_t>> posted_;  // undelivered
  Request next_ = 1;
};

}  // namespace qccl::transport
