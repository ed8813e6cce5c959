// x86-64 with AVX2, FMA, F16C and SSE4.2 (compiled with those flags, see CMakeLists.txt).
#define QCCL_ISA avx2
#include "codecs/cpu/crc32c.h"
#include "codecs/cpu/kernels_impl.h"

namespace qccl {
inline namespace avx2 {
const codec::KernelTable& isaKernelTable() {
  static constexpr codec::KernelTable table{"avx2", &kernels::encode, &kernels::decode,
                                            &codec::crc32cSse42};
  return table;
}
}  // namespace avx2
}  // namespace qccl
