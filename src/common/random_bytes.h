// Cryptographically random bytes from the kernel (getrandom), for secrets and nonces.
#pragma once

#include <cstddef>

namespace qccl {

void randomBytes(void* out, size_t size);

}  // namespace qccl
