// The transport interface (Gloo-like, small): tagged sends and receives of bytes between the
// ranks of one communicator. Transports know nothing of codecs or collectives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qccl::transport {

class Transport {
 public:
  using Request = uint64_t;

  virtual ~Transport() = default;

  virtual const char* name() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The host each rank runs on, in rank order (for grouping ranks by node).
  const std::vector<std::string>& hosts() const { return hosts_; }

  // Post a send or a receive of exactly `bytes` bytes; the buffer must stay valid until the
  // request completes or is cancelled. A receive that finds another size fails with
  // qcclInvalidUsage (the ranks disagree on count, dtype or codec).
  virtual Request isend(int peer, uint32_t tag, const void* data, size_t bytes) = 0;
  virtual Request irecv(int peer, uint32_t tag, void* data, size_t bytes) = 0;
  // True once the request has completed (it is then released); throws Error when it failed
  // (qcclRemoteError for a peer that went away). Drives progress.
  virtual bool test(Request request) = 0;
  // Abandons a pending request on an error path; its buffer is free afterwards.
  virtual void cancel(Request request) = 0;
  // The rank of a message under `tag` that has arrived and that no posted receive claims, or -1:
  // a receive from any source posts its receive for that rank (docs/API.md). Drives progress.
  virtual int probe(uint32_t tag) = 0;
  // Whether the connection to `peer` failed (UCX's peer error handling, the local transport's
  // departed ranks; Open MPI 4.1 reports no such thing).
  virtual bool peerFailed(int) const { return false; }
  // The peers of the requests still pending: when a call times out, the ranks it was waiting for
  // (alive or not: a rank may itself be waiting for another).
  virtual std::vector<int> pendingPeers() const = 0;
  // A call failed because a peer is gone or silent (qcclRemoteError, qcclTimeout): a transport
  // whose shutdown would wait for every peer stops waiting for them.
  virtual void peerLost() {}

 protected:
  Transport(int rank, int size) : rank_(rank), size_(size) {}
  std::vector<std::string> hosts_;

 private:
  int rank_;
  int size_;
};

}  // namespace qccl::transport
