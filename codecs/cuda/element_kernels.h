// Runs the element conversions on the GPU, so tests can check that the device copies of the
// shared __host__ __device__ definitions give the CPU's bits. Plain C++: callable from g++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace qccl::cuda {

enum class ElementOp {
  EncodeE4M3,
  EncodeE5M2,
  EncodeE2M1,
  EncodeUE5M3,
  EncodeFp16,
  EncodeBf16,
  DecodeE4M3,  // input: codes as the low bits of each word
  DecodeE5M2,
  DecodeE2M1,
  DecodeUE5M3,
  DecodeFp16,
  DecodeBf16,
  StochasticE4M3,  // bits: stochasticRoundTo<E4M3>(x, random = index * 2654435761) as float
  MxScaleE4M3,     // mxScaleCode(|x|, 448)
  RhtForward64,    // rhtForward on runs of 64 with seed 1234, output as float bits
};

// True when a CUDA device can run kernels; otherwise why names the reason.
bool deviceAvailable(std::string* why);

// Applies op to n 32-bit words (floats or codes) from host memory; results to host memory.
void runElementOp(ElementOp op, const uint32_t* in, size_t n, uint32_t* out);

}  // namespace qccl::cuda
