// Communicator lifecycle: unique ids, init, finalize, destroy, abort, queries.
#include <mutex>
#include <vector>

#include "src/api/api_guard.h"
#include "src/comm/collective_calls.h"
#include "src/comm/comm.h"
#include "src/comm/comm_grow.h"
#include "src/comm/comm_shrink.h"
#include "src/comm/unique_id_source.h"

using qccl::apiCall;
using qccl::throwError;

extern "C" {

qcclResult_t qcclGetUniqueId(qcclUniqueId* uniqueId) {
  return apiCall(__func__, [&] {
    if (uniqueId == nullptr) throwError(qcclInvalidArgument, "uniqueId is NULL");
    *uniqueId = qccl::newUniqueId();
  });
}

qcclResult_t qcclCommInitRankConfig(qcclComm_t* comm, int nranks, qcclUniqueId commId, int rank,
                                    qcclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (comm == nullptr) throwError(qcclInvalidArgument, "comm is NULL");
    *comm = qccl::createComm(nranks, commId, rank, config);
  });
}

qcclResult_t qcclCommInitRank(qcclComm_t* comm, int nranks, qcclUniqueId commId, int rank) {
  return qcclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

qcclResult_t qcclCommInitFromEnv(qcclComm_t* comm, qcclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (comm == nullptr) throwError(qcclInvalidArgument, "comm is NULL");
    const qccl::LaunchInfo launch = qccl::launchInfoFromEnv();
    *comm = qccl::createComm(launch.size, launch.id, launch.rank, config);
  });
}

qcclResult_t qcclCommInitFromNccl(qcclComm_t* comm, struct ncclComm* ncclComm,
                                  qcclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (comm == nullptr) throwError(qcclInvalidArgument, "comm is NULL");
    *comm = qccl::adoptNccl(ncclComm, config);
  });
}

qcclResult_t qcclCommShrink(qcclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            qcclComm_t* newcomm, qcclConfig_t* config, int shrinkFlags) {
  return apiCall(__func__, [&] {
    if (newcomm == nullptr) throwError(qcclInvalidArgument, "newcomm is NULL");
    *newcomm = nullptr;
    if (excludeRanksCount < 0 || (excludeRanksCount > 0 && excludeRanksList == nullptr)) {
      throwError(qcclInvalidArgument, "excludeRanksList is NULL or excludeRanksCount (%d) < 0",
                 excludeRanksCount);
    }
    qcclComm& parent = qccl::knownComm(comm);
    if (parent.state.load() == qcclComm::State::Aborted) {
      throwError(qcclInvalidUsage,
                 "the communicator was aborted (its "
                 "connections are closed): shrink it instead of aborting it");
    }
    *newcomm = qccl::shrinkComm(
        parent, std::vector<int>(excludeRanksList, excludeRanksList + excludeRanksCount), config,
        shrinkFlags);
  });
}

qcclResult_t qcclCommGetUniqueId(qcclComm_t comm, qcclUniqueId* uniqueId) {
  return apiCall(__func__, [&] {
    if (uniqueId == nullptr) throwError(qcclInvalidArgument, "uniqueId is NULL");
    *uniqueId = qccl::growUniqueId(qccl::usableComm(comm));
  });
}

qcclResult_t qcclCommGrow(qcclComm_t comm, int nRanks, const qcclUniqueId* uniqueId, int rank,
                          qcclComm_t* newcomm, qcclConfig_t* config) {
  return apiCall(__func__, [&] {
    if (newcomm == nullptr) throwError(qcclInvalidArgument, "newcomm is NULL");
    *newcomm = nullptr;
    if (comm == nullptr) {  // a new rank: an init under the grow's id
      if (uniqueId == nullptr) {
        throwError(qcclInvalidArgument, "a new rank (comm NULL) needs the uniqueId");
      }
      if (rank < 0 || rank >= nRanks) {
        throwError(qcclInvalidArgument, "new rank %d is out of range for %d ranks", rank, nRanks);
      }
      *newcomm = qccl::createComm(nRanks, *uniqueId, rank, config);
      return;
    }
    if (rank != -1) {
      throwError(qcclInvalidArgument, "a member passes rank -1 (it keeps its rank), not %d", rank);
    }
    *newcomm = qccl::growComm(qccl::usableComm(comm), nRanks, uniqueId, config);
  });
}

qcclResult_t qcclCommGetAsyncError(qcclComm_t comm, qcclResult_t* asyncError) {
  return apiCall(__func__, [&] {
    if (asyncError == nullptr) throwError(qcclInvalidArgument, "asyncError is NULL");
    *asyncError = qccl::asyncErrorOf(qccl::knownComm(comm));
  });
}

qcclResult_t qcclCommFinalize(qcclComm_t comm) {
  // A barrier: the peers have all reached it. Nothing is released until qcclCommDestroy.
  return apiCall(__func__, [&] { qccl::runBarrier(qccl::usableComm(comm), nullptr); });
}

qcclResult_t qcclCommDestroy(qcclComm_t comm) {
  return apiCall(__func__, [&] { qccl::destroyComm(qccl::knownComm(comm)); });
}

qcclResult_t qcclCommAbort(qcclComm_t comm) {
  return apiCall(__func__, [&] { qccl::abortComm(qccl::knownComm(comm)); });
}

qcclResult_t qcclCommCount(const qcclComm_t comm, int* count) {
  return apiCall(__func__, [&] {
    if (count == nullptr) throwError(qcclInvalidArgument, "count is NULL");
    *count = qccl::knownComm(comm).nranks;
  });
}

qcclResult_t qcclCommUserRank(const qcclComm_t comm, int* rank) {
  return apiCall(__func__, [&] {
    if (rank == nullptr) throwError(qcclInvalidArgument, "rank is NULL");
    *rank = qccl::knownComm(comm).rank;
  });
}

qcclResult_t qcclCommWireBytes(const qcclComm_t comm, uint64_t* sent, uint64_t* received) {
  return apiCall(__func__, [&] {
    qcclComm& c = qccl::knownComm(comm);
    std::lock_guard<std::mutex> lock(c.callMutex);
    if (sent) *sent = c.wire.sent;
    if (received) *received = c.wire.received;
  });
}

}  // extern "C"
