#include "src/comm/failure_notice.h"

#include "collectives/context.h"
#include "src/common/error.h"

namespace qccl {

void noticeFailure(qcclComm& comm) {
  // The last call this rank entered (makeContext counts calls up; point-to-point calls do not):
  // the one it gave up, or for a point-to-point call, one every rank has entered already.
  comm.gaveUp = comm.sequence - 1;
  for (int p = 0; p < comm.nranks; ++p) {
    if (p == comm.rank || comm.transport->peerFailed(p)) continue;
    try {
      comm.transport->isend(p, coll::kFailureNoticeTag, &comm.gaveUp, sizeof comm.gaveUp);
    } catch (const Error&) {
      // That peer is gone too: nobody there to tell.
    }
  }
}

}  // namespace qccl
