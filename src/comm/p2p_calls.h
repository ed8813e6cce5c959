// The communicator side of point-to-point messages (point_to_point.h) under its call lock, and
// NCCL's group calls around them: between qcclGroupStart and qcclGroupEnd, qcclSend and qcclRecv
// are deferred and qcclGroupEnd posts them all before it waits for any, so that two ranks may send
// to each other in one group; collectives inside a group run when called (docs/API.md).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "src/comm/comm.h"
#include "src/comm/point_to_point.h"

namespace qccl {

uint64_t postMessage(qcclComm& comm, const P2pMessage& message);
bool testMessage(qcclComm& comm, uint64_t id);
// Abandons a message, also on a communicator that failed or was aborted since.
void cancelMessage(qcclComm& comm, uint64_t id);
// Waits for every message until the largest QCCL_TIMEOUT of their communicators; on an error or
// the timeout (qcclTimeout, which leaves those communicators failed) cancels the rest and throws.
void waitMessages(const std::vector<std::pair<qcclComm*, uint64_t>>& messages);

// qcclSend / qcclRecv: deferred inside a group, else posted and waited for.
void sendOrReceive(qcclComm& comm, const P2pMessage& message);
void groupStart();
// Posts and waits for what the outermost group deferred; an inner qcclGroupEnd only counts.
// Throws Error(qcclInvalidUsage) without a group to end.
void groupEnd();

}  // namespace qccl
