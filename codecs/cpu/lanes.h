// The target's widest vector register in GCC's generic vector extension (16 lanes of 32 bits with
// AVX-512, 8 with AVX2), for kernels that spell out a whole-register loop: the Philox rounds
// (cpu/philox_vec.h), the stochastic rounding (cpu/stochastic_vec.h), the block scaling
// (cpu/kernels_impl.h). Undefined on the portable target, which has none.
#pragma once

#include <cstdint>

namespace qccl {
inline namespace QCCL_ISA {

#if defined(__AVX512F__)
typedef float FloatLanes __attribute__((vector_size(64)));
typedef uint32_t UintLanes __attribute__((vector_size(64)));
typedef int32_t IntLanes __attribute__((vector_size(64)));
#elif defined(__AVX2__)
typedef float FloatLanes __attribute__((vector_size(32)));
typedef uint32_t UintLanes __attribute__((vector_size(32)));
typedef int32_t IntLanes __attribute__((vector_size(32)));
#endif

}  // namespace QCCL_ISA
}  // namespace qccl
