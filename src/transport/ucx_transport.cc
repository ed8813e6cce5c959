#include "src/transport/ucx_transport.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "src/bootstrap/exchange.h"
#include "src/common/error.h"
#include "src/common/host_name.h"
#include "src/common/log.h"

namespace qccl::transport {

namespace {

// Whether this host has an RDMA device (InfiniBand, RoCE): there UCX's rendezvous protocol moves
// large messages zero-copy and is the right one.
bool hasRdmaDevice() {
  std::error_code ignored;
  std::filesystem::directory_iterator devices("/sys/class/infiniband", ignored);
  return !ignored && devices != std::filesystem::directory_iterator();
}

// UCX 1.13 over TCP and shared memory moves large messages faster eagerly than with its
// rendezvous protocol (docs/TRANSPORTS.md: 87% of a 1 Gbit/s link against 53% for a 64 MiB
// allreduce; 122 against 140 ms on shared memory), so without RDMA qccl asks for eager sends at
// every size, unless the user chose (UCX_RNDV_THRESH set).
void preferEagerWithoutRdma(ucp_config_t* config) {
  if (std::getenv("UCX_RNDV_THRESH") != nullptr || hasRdmaDevice()) return;
  if (ucp_config_modify(config, "RNDV_THRESH", "inf") == UCS_OK) {
    QCCL_INFO(kLogTransport,
              "ucx: eager protocol at every size (no RDMA device; UCX_RNDV_THRESH overrides)");
  }
}

constexpr Transport::Request kCompleted = 0;  // finished when posted, nothing to track

void check(ucs_status_t status, const char* what) {
  if (status != UCS_OK) throwError(qcclSystemError, "ucx: %s: %s", what, ucs_status_string(status));
}

// The UCX tag: the sender's rank in the high 32 bits, the transport tag in the low ones.
ucp_tag_t ucxTag(int source, uint32_t tag) { return (ucp_tag_t(uint32_t(source)) << 32) | tag; }

void onSend(void*, ucs_status_t status, void* user) {
  auto* op = static_cast<UcxTransport::Operation*>(user);
  op->status = status;
  op->done = true;
}

void onRecv(void*, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user) {
  auto* op = static_cast<UcxTransport::Operation*>(user);
  op->status = status;
  op->received = info ? info->length : 0;
  op->done = true;
}

void onPeerError(void* arg, ucp_ep_h, ucs_status_t status) {
  *static_cast<ucs_status_t*>(arg) = status;
}

}  // namespace

UcxTransport::UcxTransport(const bootstrap::RootInfo& root, int rank, int size,
                           const Deadline& deadline)
    : Transport(rank, size) {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  preferEagerWithoutRdma(config);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG;
  const ucs_status_t initStatus = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check(initStatus, "ucp_init");
  ucp_worker_params_t workerParams{};
  workerParams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  workerParams.thread_mode = UCS_THREAD_MODE_SINGLE;
  if (ucp_worker_create(context_, &workerParams, &worker_) != UCS_OK) {
    ucp_cleanup(context_);
    throwError(qcclSystemError, "ucx: ucp_worker_create failed");
  }
  try {
    ucp_address_t* address = nullptr;
    size_t addressBytes = 0;
    check(ucp_worker_get_address(worker_, &address, &addressBytes), "ucp_worker_get_address");
    std::string payload = hostName();
    payload.push_back('\0');
    payload.append(reinterpret_cast<const char*>(address), addressBytes);
    ucp_worker_release_address(worker_, address);

    const std::vector<std::string> all =
        bootstrap::exchangeThroughRoot(root, rank, size, payload, deadline);
    peerStatus_.assign(size_t(size), UCS_OK);
    endpoints_.assign(size_t(size), nullptr);
    for (int p = 0; p < size; ++p) {
      const std::string& entry = all[size_t(p)];
      const size_t split = entry.find('\0');
      hosts_.push_back(entry.substr(0, split));
      ucp_ep_params_t ep{};
      ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.address = reinterpret_cast<const ucp_address_t*>(entry.data() + split + 1);
      ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      ep.err_handler.cb = onPeerError;
      ep.err_handler.arg = &peerStatus_[size_t(p)];
      check(ucp_ep_create(worker_, &ep, &endpoints_[size_t(p)]), "ucp_ep_create");
    }
    greetPeers(deadline);
    QCCL_INFO(kLogTransport, "ucx: rank %d of %d connected", rank, size);
  } catch (...) {
    closeEndpoints();
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    throw;
  }
}

// One byte to and from every peer, before init returns: UCX's TCP transport connects at an
// endpoint's first message, and a peer that dies while that connection is being made trips an
// assertion inside UCX 1.13 (tcp_iface.c, "conn_state != UCT_TCP_EP_CONN_STATE_CLOSED") that
// aborts this process (the fault matrix's kill-before case, docs/RELIABILITY.md). Made here, the
// connections exist before any peer can fail. Tag 0 is no collective's (their sequence starts at
// 1).
void UcxTransport::greetPeers(const Deadline& deadline) {
  const uint8_t hello = 1;
  std::vector<uint8_t> replies(endpoints_.size());
  std::vector<Request> pending;
  for (int p = 0; p < int(endpoints_.size()); ++p) {
    if (p == rank()) continue;
    pending.push_back(irecv(p, 0, &replies[size_t(p)], 1));
    pending.push_back(isend(p, 0, &hello, 1));
  }
  while (!pending.empty()) {
    for (size_t i = pending.size(); i-- > 0;) {
      if (test(pending[i])) pending.erase(pending.begin() + long(i));
    }
    if (!pending.empty() && deadline.passed()) {
      for (Request r : pending) cancel(r);
      throwError(qcclTimeout, "ucx: not every peer answered within QCCL_TIMEOUT at init");
    }
  }
}

UcxTransport::~UcxTransport() {
  for (auto& entry : operations_) drop(std::move(entry.second));
  operations_.clear();
  // Messages this rank sent may still be on their way: let them land before the endpoints go,
  // but do not wait long for peers that are gone.
  ucp_request_param_t param{};
  const ucs_status_ptr_t flush = ucp_worker_flush_nbx(worker_, &param);
  if (UCS_PTR_IS_PTR(flush)) {
    const Deadline deadline = Deadline::after(std::chrono::seconds(10));
    while (ucp_request_check_status(flush) == UCS_INPROGRESS && !deadline.passed()) {
      ucp_worker_progress(worker_);
    }
    if (ucp_request_check_status(flush) == UCS_INPROGRESS) ucp_request_cancel(worker_, flush);
    ucp_request_free(flush);
  }
  closeEndpoints();  // completes whatever is still pending, with errors
  for (auto& op : abandoned_) {
    if (op->done && op->ucxRequest) ucp_request_free(op->ucxRequest);
  }
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
}

void UcxTransport::closeEndpoints() {
  std::vector<ucs_status_ptr_t> closing;
  for (ucp_ep_h ep : endpoints_) {
    if (ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;  // peers may be gone already; nothing left to flush
    const ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(r)) closing.push_back(r);
  }
  endpoints_.clear();
  for (ucs_status_ptr_t r : closing) {
    while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(r);
  }
}

Transport::Request UcxTransport::track(std::unique_ptr<Operation> op, ucs_status_ptr_t result) {
  if (UCS_PTR_IS_ERR(result)) {
    throwError(qcclRemoteError, "ucx: %s rank %d failed: %s",
               op->isRecv ? "receive from" : "send to", op->peer,
               ucs_status_string(UCS_PTR_STATUS(result)));
  }
  if (result == nullptr) op->done = true;
  op->ucxRequest = result;
  if (op->done && !op->isRecv) return kCompleted;
  const Request id = next_++;
  operations_.emplace(id, std::move(op));
  return id;
}

Transport::Request UcxTransport::isend(int peer, uint32_t tag, const void* data, size_t bytes) {
  if (peerStatus_[size_t(peer)] != UCS_OK) {
    throwError(qcclRemoteError, "ucx: rank %d is unreachable: %s", peer,
               ucs_status_string(peerStatus_[size_t(peer)]));
  }
  auto op = std::make_unique<Operation>();
  op->peer = peer;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = onSend;
  param.user_data = op.get();
  const ucs_status_ptr_t r =
      ucp_tag_send_nbx(endpoints_[size_t(peer)], data, bytes, ucxTag(rank(), tag), &param);
  return track(std::move(op), r);
}

Transport::Request UcxTransport::irecv(int peer, uint32_t tag, void* data, size_t bytes) {
  auto op = std::make_unique<Operation>();
  op->peer = peer;
  op->isRecv = true;
  op->expected = bytes;
  ucp_request_param_t param{};
  // Always a request and a callback, which reports the received length.
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = onRecv;
  param.user_data = op.get();
  const ucs_status_ptr_t r =
      ucp_tag_recv_nbx(worker_, data, bytes, ucxTag(peer, tag), ~ucp_tag_t(0), &param);
  return track(std::move(op), r);
}

bool UcxTransport::release(Operation& op) {
  if (op.ucxRequest == nullptr) return true;
  if (!op.done) {
    // Receives cancel at once; a send UCX cannot take back may not: wait a little, no more (a
    // failed call returns this much after QCCL_TIMEOUT at worst).
    ucp_request_cancel(worker_, op.ucxRequest);
    const Deadline deadline = Deadline::after(std::chrono::milliseconds(500));
    while (!op.done && !deadline.passed()) ucp_worker_progress(worker_);
    if (!op.done) return false;
  }
  ucp_request_free(op.ucxRequest);
  op.ucxRequest = nullptr;
  return true;
}

void UcxTransport::drop(std::unique_ptr<Operation> op) {
  if (!release(*op)) abandoned_.push_back(std::move(op));
}

bool UcxTransport::test(Request request) {
  if (request == kCompleted) return true;
  auto it = operations_.find(request);
  if (it == operations_.end()) throwError(qcclInternalError, "ucx: unknown request");
  Operation& op = *it->second;
  if (!op.done) {
    ucp_worker_progress(worker_);
    if (!op.done && peerStatus_[size_t(op.peer)] == UCS_OK) return false;
  }
  const Operation done = op;  // a receive from a failed peer is not done: it is cancelled here
  drop(std::move(it->second));
  operations_.erase(it);
  // Only a completed receive has a length: one ended by its peer's failure is reported below.
  if (done.done && (done.status == UCS_ERR_MESSAGE_TRUNCATED ||
                    (done.isRecv && done.status == UCS_OK && done.received != done.expected))) {
    throwError(qcclInvalidUsage,
               "rank %d sent %s bytes where %zu were expected: the ranks disagree on count, "
               "dtype or codec",
               done.peer, done.status == UCS_OK ? std::to_string(done.received).c_str() : "more",
               done.expected);
  }
  const ucs_status_t status = done.done ? done.status : peerStatus_[size_t(done.peer)];
  if (status != UCS_OK) {
    throwError(qcclRemoteError, "ucx: %s rank %d failed: %s (did it exit?)",
               done.isRecv ? "receive from" : "send to", done.peer, ucs_status_string(status));
  }
  return true;
}

std::vector<int> UcxTransport::pendingPeers() const {
  std::vector<int> peers;
  for (const auto& entry : operations_) {
    if (!entry.second->done) peers.push_back(entry.second->peer);
  }
  return peers;
}

int UcxTransport::probe(uint32_t tag) {
  ucp_worker_progress(worker_);
  // Posted receives match on arrival, so what the probe finds (among the unexpected messages) no
  // receive claims; the mask leaves out the sender's rank in the high bits.
  ucp_tag_recv_info_t info;
  const ucp_tag_message_h found =
      ucp_tag_probe_nb(worker_, ucxTag(0, tag), ucp_tag_t(UINT32_MAX), 0, &info);
  return found ? int(info.sender_tag >> 32) : -1;
}

void UcxTransport::cancel(Request request) {
  auto it = operations_.find(request);
  if (it == operations_.end()) return;
  drop(std::move(it->second));
  operations_.erase(it);
}

}  // namespace qccl::transport
