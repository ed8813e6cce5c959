// The mask exchange of the shared-mask collectives (docs/ALGORITHMS.md, "Shared-mask
// collectives"): each rank's mask of its own shard to every rank, over point-to-point messages
// that complete in the background, so that the exchange overlaps a training step. Each shard's
// mask travels as a bitmap or as a list of its set positions, whichever is smaller: a header
// (the form and the body's bytes) and then the body, both under the caller's tag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/comm/comm.h"

namespace qccl {

class MaskExchange {
 public:
  // Posts this rank's shard mask (shard bits) to every other rank and the receives of theirs, and
  // writes its own into `mask` (nranks * shard bits: rank r's at bits r * shard ...). Throws
  // Error(qcclInvalidArgument) for bad arguments, before posting anything.
  MaskExchange(qcclComm& comm, const uint8_t* shardMask, uint8_t* mask, size_t shard, uint32_t tag);
  MaskExchange(const MaskExchange&) = delete;
  MaskExchange& operator=(const MaskExchange&) = delete;
  ~MaskExchange();  // cancels the messages still pending

  // Whether every shard's mask is in `mask`, without waiting. Throws Error for a failed message
  // or a malformed one (qcclInvalidUsage: the ranks disagree on the shard size).
  bool test();
  // Until every shard's mask is in `mask`, at most the communicator's timeout per message.
  void wait();

 private:
  struct Peer {
    int rank = 0;
    uint64_t header = 0;  // received: form (top bit: positions) and body bytes
    std::vector<uint8_t> body;
    uint64_t headerId = 0, bodyId = 0;
    bool headerDone = false, bodyPosted = false, done = false;
  };
  void progress(Peer& peer);  // after its header or body completed
  void place(const Peer& peer);

  qcclComm& comm_;
  uint8_t* mask_;
  size_t shard_;
  uint32_t tag_;
  std::vector<Peer> peers_;
  std::vector<uint64_t> sends_;  // ids of this rank's messages
};

}  // namespace qccl
