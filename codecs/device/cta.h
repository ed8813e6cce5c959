// A thread block as the device tiles see it. Tile bodies are written as numbered phases: every
// thread of a block finishes phase k before any starts phase k+1 (a __syncthreads() between
// phases on the device; the CPU emulation in the tests runs phase k for every thread in turn, in
// both thread orders, so a body that read another thread's writes within a phase would show).
#pragma once

#include "codecs/element/host_device.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

struct Cta {
  uint64_t block;    // blockIdx.x
  uint32_t thread;   // threadIdx.x
  uint32_t threads;  // blockDim.x
  float* shared;     // the block's dynamic shared memory
};

// The largest of *word and value, atomically on the device (the emulation runs one thread at a
// time).
QCCL_HD void maxInto(uint32_t* word, uint32_t value) {
#if defined(__CUDA_ARCH__)
  atomicMax(word, value);
#else
  if (value > *word) *word = value;
#endif
}

// Sets *word to code unless it holds one already.
QCCL_HD void raiseStatus(uint32_t* word, uint32_t code) {
#if defined(__CUDA_ARCH__)
  atomicCAS(word, 0u, code);
#else
  if (*word == 0) *word = code;
#endif
}

QCCL_HD int log2Of(uint32_t powerOfTwo) {
  int l = 0;
  while ((1u << l) < powerOfTwo) ++l;
  return l;
}

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
