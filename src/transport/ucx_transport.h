// UCX: UCP's tag API over whatever UCX finds (shared memory between processes of one host, TCP,
// verbs). Worker addresses are exchanged through the bootstrap. A peer whose connection breaks
// fails its pending operations with qcclRemoteError (UCX's peer error handling).
#pragma once

#include <ucp/api/ucp.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/bootstrap/unique_id.h"
#include "src/common/deadline.h"
#include "src/transport/transport.h"
#include "src/transport/transport_kind.h"

namespace qccl::transport {

class UcxTransport : public Transport {
 public:
  UcxTransport(const bootstrap::RootInfo& root, int rank, int size, const Deadline& deadline);
  ~UcxTransport() override;

  const char* name() const override { return transportName(TransportKind::Ucx); }
  Request isend(int peer, uint32_t tag, const void* data, size_t bytes) override;
  Request irecv(int peer, uint32_t tag, void* data, size_t bytes) override;
  bool test(Request request) override;
  void cancel(Request request) override;
  int probe(uint32_t tag) override;
  std::vector<int> pendingPeers() const override;
  bool peerFailed(int peer) const override { return peerStatus_[size_t(peer)] != UCS_OK; }

  // Completion record of one operation; UCX's callbacks fill it in.
  struct Operation {
    bool done = false;
    ucs_status_t status = UCS_OK;
    size_t received = 0;
    size_t expected = 0;
    void* ucxRequest = nullptr;
    int peer = -1;
    bool isRecv = false;
  };

 private:
  Request track(std::unique_ptr<Operation> op, ucs_status_ptr_t result);
  // Frees a finished request, cancelling it first if needed; false if UCX did not complete the
  // cancellation in time (then the operation must outlive its pending callback).
  bool release(Operation& op);
  void drop(std::unique_ptr<Operation> op);
  void closeEndpoints();
  void greetPeers(const Deadline& deadline);

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<ucp_ep_h> endpoints_;
  std::vector<ucs_status_t> peerStatus_;  // UCS_OK until a peer's endpoint fails
  std::unordered_map<Request, std::unique_ptr<Operation>> operations_;
  std::vector<std::unique_ptr<Operation>> abandoned_;  // cancelled, callback still pending
  Request next_ = 1;
};

}  // namespace qccl::transport
