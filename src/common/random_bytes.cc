#include "src/common/random_bytes.h"

#include <sys/random.h>

#include <cerrno>

#include "src/common/error.h"

namespace qccl {

void randomBytes(void* out, size_t size) {
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t got = getrandom(p, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throwError(qcclSystemError, "getrandom: %s", errnoText(errno).c_str());
    }
    p += got;
    size -= size_t(got);
  }
}

}  // namespace qccl
