// The runtime's exception: a qcclResult_t and a message. Thrown anywhere below the API, turned
// into the return code and qcclGetLastError's message by src/api/api_guard.h.
#pragma once

#include <stdexcept>
#include <string>

#include "qccl/qccl.h"

namespace qccl {

class Error : public std::runtime_error {
 public:
  Error(qcclResult_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  qcclResult_t code() const { return code_; }

 private:
  qcclResult_t code_;
};

[[noreturn]] void throwError(qcclResult_t code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// errno's text, for system-call failures.
std::string errnoText(int err);

}  // namespace qccl
