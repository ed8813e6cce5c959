// Error-feedback state: reset, size, save, load.
#include <mutex>

#include "src/api/api_guard.h"
#include "src/comm/comm.h"

using qccl::apiCall;
using qccl::throwError;

extern "C" {

qcclResult_t qcclEfReset(qcclComm_t comm, uint64_t key) {
  return apiCall(__func__, [&] {
    qcclComm& c = qccl::usableComm(comm);
    std::lock_guard<std::mutex> lock(c.callMutex);
    c.ef->reset(key);
  });
}

qcclResult_t qcclEfStateSize(qcclComm_t comm, size_t* bytes) {
  return apiCall(__func__, [&] {
    if (bytes == nullptr) throwError(qcclInvalidArgument, "bytes is NULL");
    qcclComm& c = qccl::usableComm(comm);
    std::lock_guard<std::mutex> lock(c.callMutex);
    *bytes = c.ef->stateBytes();
  });
}

qcclResult_t qcclEfStateSave(qcclComm_t comm, void* buffer, size_t bytes) {
  return apiCall(__func__, [&] {
    qcclComm& c = qccl::usableComm(comm);
    std::lock_guard<std::mutex> lock(c.callMutex);
    c.ef->save(buffer, bytes, c.rank, c.nranks);
  });
}

qcclResult_t qcclEfStateLoad(qcclComm_t comm, const void* buffer, size_t bytes) {
  return apiCall(__func__, [&] {
    qcclComm& c = qccl::usableComm(comm);
    std::lock_guard<std::mutex> lock(c.callMutex);
    c.ef->load(buffer, bytes, c.rank, c.nranks);
  });
}

}  // extern "C"
