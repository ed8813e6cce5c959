// Every call on a communicator (collective or point-to-point) runs under its call lock, on a
// communicator that can take calls; a timeout or a lost peer leaves the communicator failed (its
// message streams are out of step), and so does a failed NCCL or CUDA.
#pragma once

#include <mutex>

#include "src/comm/comm.h"
#include "src/comm/failure_notice.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

template <class Body>
void guarded(qcclComm& comm, Body&& body) {
  std::lock_guard<std::mutex> lock(comm.callMutex);
  usableComm(&comm);
  try {
    body();
  } catch (const Error& e) {
    const qcclResult_t code = e.code();
    if (code == qcclTimeout || code == qcclRemoteError || code == qcclSystemError ||
        code == qcclUnhandledCudaError) {
      comm.failure = e.what();
      comm.failureCode = code;
      comm.state.store(qcclComm::State::Failed);
      QCCL_WARN("rank %d: %s", comm.rank, e.what());
      if (comm.transport && (code == qcclTimeout || code == qcclRemoteError)) {
        comm.transport->peerLost();
        noticeFailure(comm);
      }
    }
    throw;
  }
}

}  // namespace qccl
