// Eight-lane vectors in GCC's generic vector extension, for the kernels that spell out their
// vector code (cpu/hadamard_vec.h, cpu/nibble_vec.h): one register from AVX on.
#pragma once

#include "codecs/element/host_device.h"

namespace qccl {
inline namespace QCCL_ISA {

#if defined(__AVX__)
typedef float Float8 __attribute__((vector_size(32)));
typedef int Int8 __attribute__((vector_size(32)));
typedef unsigned UInt8 __attribute__((vector_size(32)));

// Always inlined: a Float8 passed or returned by value outside AVX code would change the ABI.
QCCL_HD Float8 loadFloat8(const float* p) {
  Float8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

QCCL_HD void storeFloat8(float* p, Float8 v) { __builtin_memcpy(p, &v, sizeof v); }
#endif

}  // namespace QCCL_ISA
}  // namespace qccl
