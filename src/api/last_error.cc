#include "src/api/last_error.h"

namespace qccl {

namespace {
thread_local std::string tlsLastError;
}

void setLastError(const std::string& message) { tlsLastError = message; }

const char* lastError() { return tlsLastError.c_str(); }

}  // namespace qccl
