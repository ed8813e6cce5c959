// The thread's last error message, as qcclGetLastError returns it.
#pragma once

#include <string>

namespace qccl {

void setLastError(const std::string& message);
const char* lastError();

}  // namespace qccl
