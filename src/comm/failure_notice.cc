#include "src/comm/failure_notice.h"

#include "collectives/context.h"
#include "src/common/error.h"

namespace qccl {

void noticeFailure(qcclComm& comm) {
  static const uint8_t notice = 1;
  for (int p = 0; p < comm.nranks; ++p) {
    if (p == comm.rank || comm.transport->peerFailed(p)) continue;
    try {
      comm.transport->isend(p, coll::kFailureNoticeTag, &notice, 1);
    } catch (const Error&) {
      // That peer is gone too: nobody there to tell.
    }
  }
}

}  // namespace qccl
