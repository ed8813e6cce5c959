// A rank that gives a call up because a peer was lost or silent tells every other rank so, under a
// tag no message of a call uses (collectives/context.h, kFailureNoticeTag): a rank still waiting
// in its own call, perhaps for a rank that is alive but gave up too, then stops within
// milliseconds instead of at its timeout, and the survivors meet in qcclCommShrink together.
#pragma once

#include "src/comm/comm.h"

namespace qccl {

// Sends the notice to every other rank whose connection has not failed. Best effort: a send that
// fails is ignored, and the sends are never waited for (the communicator has failed; they go when
// its transport does).
void noticeFailure(qcclComm& comm);

}  // namespace qccl
