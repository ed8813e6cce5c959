#include "src/common/error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace qccl {

void throwError(qcclResult_t code, const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  throw Error(code, message);
}

std::string errnoText(int err) {
  char buffer[256];
  // GNU strerror_r returns the message, which may not be buffer.
  return strerror_r(err, buffer, sizeof buffer);
}

}  // namespace qccl
