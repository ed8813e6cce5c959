// Portability layer for code that is compiled both by the host compiler (once per CPU target)
// and by nvcc: QCCL_HD marks functions callable on both sides, QCCL_ISA names the inline
// namespace that keeps each target's copy of an inline function distinct, so that the linker
// never substitutes an AVX2 copy into the portable kernels.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define QCCL_HD __host__ __device__ __forceinline__
#else
#define QCCL_HD inline __attribute__((always_inline))
#endif

#ifndef QCCL_ISA
#if defined(__CUDACC__)  // both nvcc passes must name the same namespace
#define QCCL_ISA device
#else
#define QCCL_ISA portable
#endif
#endif

namespace qccl {
inline namespace QCCL_ISA {

QCCL_HD uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

QCCL_HD float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

QCCL_HD uint32_t minU32(uint32_t a, uint32_t b) { return a < b ? a : b; }
QCCL_HD uint32_t maxU32(uint32_t a, uint32_t b) { return a > b ? a : b; }

// 2^e as a float for e in [-149, 127], subnormals included.
QCCL_HD float exp2Int(int e) {
  return e >= -126 ? bitsFloat(uint32_t(e + 127) << 23) : bitsFloat(1u << (e + 149));
}

constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kInfBits = 0x7f800000u;

}  // namespace QCCL_ISA
}  // namespace qccl
