// Before a pipelined collective moves data, its ranks swap a 40-byte description of the call
// (collective, dtype, op, count, codec, segment size) and compare them.
//
// A pipelined collective sends as many messages to each peer as the call's shape says, so ranks
// that disagree on the shape would wait for messages that never come. This exchange is one
// message per peer whatever the shape: every rank sees every other's call, and all of them return
// qcclInvalidUsage together, before anything was encoded into a residual, sent or written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/context.h"
#include "collectives/message_kinds.h"
#include "collectives/messages.h"

namespace qccl::coll {

// The description's size: an exact header and the codec's 24 bytes.
constexpr size_t kCallDescriptionBytes = kExactHeaderBytes + 24;

struct CallShape {
  MessageKind kind;  // which collective
  qcclDataType_t dtype;
  int op;
  size_t count;
  // An exact call: described with codec none whatever the communicator's (the codec does not
  // apply), and its segment size.
  bool exact = false;
};

// True when every rank of the group makes the same call; otherwise records the first difference
// in the context and returns false on every rank.
bool agreeOnCall(Context& context, const CallShape& call);

}  // namespace qccl::coll
