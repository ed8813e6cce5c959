// Point-to-point messages between two ranks: qcclSend / qcclRecv (NCCL's, alone or inside
// qcclGroupStart / qcclGroupEnd) and qccl's non-blocking qcclIsend / qcclIrecv with a tag, on host
// buffers over the communicator's tagged transport (docs/API.md, "Point-to-point").
//
// A message is framed with the exact header (dtype and count, kind PointToPoint), so a receive
// that meets another dtype or count fails with qcclInvalidUsage naming both, and it travels under
// tag (userTag << 8) | kPointToPointStep, a step no collective's phase uses: point-to-point
// traffic neither consumes the communicator's call sequence (which every rank steps through
// alike, and two ranks' messages do not) nor matches a collective's messages. Between two ranks,
// messages of one tag match in the order they were posted, as MPI's, UCX's and gloo's do.
//
// A receive from any source (qcclIrecvAnySource) is posted to the transport only once a probe
// finds a message of its tag that no posted receive claims; the probe runs when the receive is
// tested, oldest such receive of the tag first, so they take messages in the order they were
// posted (docs/API.md says what this means for a receive from a named source posted meanwhile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "qccl/qccl.h"
#include "src/transport/transport.h"

struct qcclComm;

namespace qccl {

// User tags: 24 bits (the low byte of the transport tag names the step).
constexpr uint32_t kMaxPointToPointTag = (1u << 24) - 1;

struct P2pMessage {
  bool send = false;
  void* buffer = nullptr;  // host memory (a send's is only read)
  size_t count = 0;
  qcclDataType_t dtype = qcclUint8;
  int peer = 0;  // a receive from any source: the sender, once known
  uint32_t tag = 0;
  bool anySource = false;  // receives only; peer is then ignored
  int* source = nullptr;   // a receive from any source writes the sender's rank here when done
};

// The messages a communicator has in flight. Not thread-safe: callers hold the call lock.
class PointToPoint {
 public:
  // Checks the message (throws Error(qcclInvalidArgument) naming what is wrong), posts it and
  // returns its id; a send's payload is copied, so its buffer is free again at once.
  uint64_t post(qcclComm& comm, const P2pMessage& message);
  // True once the message is complete (and forgotten): a receive's payload is then in its
  // buffer. Throws Error: qcclInvalidUsage for a mismatched message (its buffer untouched),
  // qcclRemoteError for a lost peer.
  bool test(qcclComm& comm, uint64_t id);
  // Abandons a message that is still pending.
  void cancel(qcclComm& comm, uint64_t id);
  // Abandons every pending message (their requests stay the caller's to free).
  void cancelAll(qcclComm& comm);
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    P2pMessage message;
    transport::Transport::Request request = 0;
    bool posted = false;          // false: a receive from any source that found no sender yet
    std::vector<uint8_t> framed;  // header + payload
  };
  // Posts the receives from any source of `tag` up to `upTo`, oldest first, while the transport
  // finds senders for them.
  void postAnySource(qcclComm& comm, uint32_t tag, uint64_t upTo);
  std::map<uint64_t, Pending> pending_;
  uint64_t next_ = 1;
};

}  // namespace qccl
