// The baseline target: whatever the compiler's default instruction set is.
#define QCCL_ISA portable
#include "codecs/cpu/crc32c.h"
#include "codecs/cpu/kernels_impl.h"

namespace qccl {
inline namespace portable {
const codec::KernelTable& isaKernelTable() {
  static constexpr codec::KernelTable table{"portable", &kernels::encode, &kernels::decode,
                                            &codec::crc32cPortable};
  return table;
}
}  // namespace portable
}  // namespace qccl
