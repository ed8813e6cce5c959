// x86-64 with AVX-512 F/BW/DQ/VL on top of the AVX2 set (compiled with those flags).
#define QCCL_ISA avx512
#include "codecs/cpu/crc32c.h"
#include "codecs/cpu/kernels_impl.h"

namespace qccl {
inline namespace avx512 {
const codec::KernelTable& isaKernelTable() {
  static constexpr codec::KernelTable table{"avx512", &kernels::encode, &kernels::decode,
                                            &codec::crc32cSse42};
  return table;
}
}  // namespace avx512
}  // namespace qccl
