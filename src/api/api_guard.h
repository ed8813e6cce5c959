// The one place where internal errors become qcclResult_t: every C entry point runs its body
// through apiCall, so no C++ exception crosses the C API and every failure leaves a message for
// qcclGetLastError, prefixed with the function's name.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "codecs/codec_error.h"
#include "qccl/qccl.h"
#include "src/api/last_error.h"
#include "src/common/error.h"

namespace qccl {

template <class Body>
qcclResult_t apiCall(const char* function, Body&& body) noexcept {
  qcclResult_t code = qcclInternalError;
  std::string message;
  try {
    body();
    return qcclSuccess;
  } catch (const Error& e) {
    code = e.code();
    message = e.what();
  } catch (const codec::CodecError& e) {
    code = e.kind() == codec::ErrorKind::InvalidArgument ? qcclInvalidArgument
           : e.kind() == codec::ErrorKind::InvalidUsage  ? qcclInvalidUsage
                                                         : qcclUnhandledCudaError;
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = qcclSystemError;
    message = "out of host memory";
  } catch (const std::exception& e) {
    message = std::string("internal error: ") + e.what();
  } catch (...) {
    message = "internal error: unknown exception";
  }
  try {
    setLastError(std::string(function) + ": " + message);
  } catch (...) {  // no memory even for the message: the code still says what happened
  }
  return code;
}

}  // namespace qccl
