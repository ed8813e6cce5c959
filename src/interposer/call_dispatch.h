// What the interposer does with each intercepted NCCL call (docs/INTEGRATION.md):
//   - a collective qccl would compress (planCall: QCCL_CODEC, QCCL_OPS, dtype fp32/bf16/fp16, op
//     Sum/Avg, QCCL_MIN_BYTES, more than one rank) runs on the qccl communicator that adopts the
//     application's NCCL communicator, on the caller's stream; every other call is forwarded to
//     the real NCCL with its arguments untouched;
//   - inside ncclGroupStart/End, compressed collectives are deferred and run, in call order, right
//     after the real group has ended: qccl's own schedule launches kernels and NCCL groups of its
//     own, which an open group would hold back while the kernels ran. The group's other
//     operations, passed through, stay in the real group. A group whose compressed calls span
//     several communicators (one thread driving several GPUs) is passed through whole, since
//     running them one after another could wait on a peer that the same thread drives next;
//   - destroy and abort drop the communicator's qccl state (abort after NCCL's own abort, which
//     frees a call that may be waiting in NCCL).
// Errors come back as NCCL result codes (qcclResult_t has NCCL's values), with a QCCL WARN line.
#pragma once

#include "src/comm/call_plan.h"
#include "src/nccl/nccl_abi.h"

namespace qccl::interposer {

nccl::Result dispatch(const ReductionCall& call, nccl::Comm comm);
nccl::Result groupStart();
nccl::Result groupEnd();
// Ends a group that NCCL only simulates (nothing runs): its deferred calls are dropped too.
nccl::Result groupSimulateEnd(void* simInfo);
nccl::Result destroy(nccl::Comm comm);
nccl::Result abort(nccl::Comm comm);

}  // namespace qccl::interposer
