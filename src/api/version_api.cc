// qcclGetVersion, qcclGetErrorString, qcclGetLastError.
#include "src/api/api_guard.h"

extern "C" {

qcclResult_t qcclGetVersion(int* version) {
  return qccl::apiCall(__func__, [&] {
    if (version == nullptr) {
      qccl::codec::throwCodecError(qccl::codec::ErrorKind::InvalidArgument, "version is NULL");
    }
    *version = QCCL_VERSION_CODE;
  });
}

const char* qcclGetErrorString(qcclResult_t result) {
  switch (result) {
    case qcclSuccess: return "no error";
    case qcclUnhandledCudaError: return "unhandled cuda error; qcclGetLastError() has the details";
    case qcclSystemError: return "unhandled system error; qcclGetLastError() has the details";
    case qcclInternalError:
      return "internal error - please report this issue to the qccl developers";
    case qcclInvalidArgument: return "invalid argument; qcclGetLastError() has the details";
    case qcclInvalidUsage: return "invalid usage; qcclGetLastError() has the details";
    case qcclRemoteError: return "remote process exited or there was a network error";
    case qcclInProgress: return "qccl operation in progress";
    case qcclTimeout: return "a wait exceeded QCCL_TIMEOUT";
    default: return "unknown result code";
  }
}

const char* qcclGetLastError(qcclComm_t) { return qccl::lastError(); }

}  // extern "C"
