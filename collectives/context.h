// What a collective needs from its communicator: the transport, the group of ranks it runs on,
// the call's codec and error-feedback state, the deadline, and the tags of its messages.
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "codecs/codec_spec.h"
#include "collectives/executor.h"
#include "collectives/stream_exchange.h"
#include "collectives/workspace.h"
#include "qccl/qccl.h"
#include "src/common/deadline.h"
#include "src/transport/transport.h"

namespace qccl::coll {

// The error-feedback residuals of the current call (the communicator keeps them by key).
class Residuals {
 public:
  enum Slot { kWorker = 0, kServer = 1 };
  virtual ~Residuals() = default;
  // count elements of dtype (qcclFloat32 or qcclBfloat16), zeros on first use or when the
  // slot's count changed since the last call with this key.
  virtual void* get(Slot slot, size_t count) = 0;
  virtual qcclDataType_t dtype() const = 0;
};

// Bytes this rank's collectives put on and took off the wire (headers included).
struct WireCounters {
  uint64_t sent = 0;
  uint64_t received = 0;
};

// Ranks taking part, as global ranks of the transport; `me` indexes this rank among them.
struct Group {
  std::vector<int> ranks;
  int me = 0;
  int size() const { return int(ranks.size()); }
};

// The low byte of a message's tag is the step of its call; these two no collective uses:
// point-to-point messages travel under the first (src/comm/point_to_point.h), the survivors'
// agreement of a shrink under the second (src/comm/survivor_agreement.h).
constexpr uint32_t kPointToPointStep = 0xFF;
constexpr uint32_t kControlStep = 0xFE;
// A rank whose call failed because a peer was lost or silent sends every other rank a notice under
// this tag, so that ranks still waiting in their own call (perhaps for a rank that is alive but
// gave up) stop at once instead of at their timeout (src/comm/call_guard.h).
// The notice carries the sequence of the call its sender gave up (uint64_t): a rank still in an
// earlier call goes on with it, since the sender finished that one and its messages are on their
// way; a rank in that call or a later one stops.
constexpr uint32_t kFailureNoticeTag = (0xFFFFFFu << 8) | kControlStep;

// The earliest call given up among the notices a rank has taken in (from: -1 while none has
// come). Kept by the communicator: the notice that reached a rank during an earlier call stops the
// call it is meant for.
struct FailureNotice {
  int from = -1;
  uint64_t sequence = 0;
};

struct Context {
  transport::Transport* transport = nullptr;  // tagged schedules
  StreamExchange* exchange = nullptr;         // stream schedules (stream_schedule.h)
  Group group;
  const std::atomic<bool>* aborted = nullptr;
  std::set<int>* silent = nullptr;  // a timeout adds the ranks it was waiting for (qcclCommShrink)
  FailureNotice* notice = nullptr;  // the communicator's: notices taken in (kFailureNoticeTag)
  Deadline deadline = Deadline::after(std::chrono::milliseconds(0));
  uint64_t sequence = 0;           // the communicator's call counter: tags and SR streams
  uint32_t nextStep = 0;           // phases within the call
  codec::CodecSpec codec;          // format None = exact
  uint64_t seed = 0;               // +rht signs and +sr key, the same on every rank
  Residuals* residuals = nullptr;  // nullptr: no error feedback
  float efDecay = 1.0f;            // the residuals' decay: p = x + (efDecay * e)
  WireCounters* wire = nullptr;    // the communicator's, if it counts
  Executor* executor = nullptr;    // computes on the call's memory
  Workspace* workspace = nullptr;  // the communicator's buffers, of the executor's memory
  size_t segmentElements = 0;      // pipelining granularity (pipeline.h); 0: none
  std::string usageError;          // first disagreement found; the call goes on to tell the peers

  uint32_t nextTag() { return uint32_t(sequence << 8) | (nextStep++ % kControlStep); }
  int globalRank() const { return group.ranks[size_t(group.me)]; }
  void recordUsageError(const std::string& message) {
    if (usageError.empty()) usageError = message;
  }
};

}  // namespace qccl::coll
