#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "codecs/cuda/element_kernels.h"
#include "codecs/element/e8m0.h"
#include "codecs/element/hadamard.h"
#include "codecs/element/minifloat.h"
#include "codecs/element/stochastic_round.h"

namespace qccl::cuda {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

template <class F>
__global__ void encodeKernel(const uint32_t* in, size_t n, uint32_t* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = encodeRne<F>(bitsFloat(in[i]));
}

template <class F>
__global__ void decodeKernel(const uint32_t* in, size_t n, uint32_t* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = floatBits(decode<F>(in[i]));
}

__global__ void stochasticKernel(const uint32_t* in, size_t n, uint32_t* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    out[i] = floatBits(stochasticRoundTo<E4M3>(bitsFloat(in[i]), uint32_t(i) * 2654435761u));
  }
}

__global__ void mxScaleKernel(const uint32_t* in, size_t n, uint32_t* out) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = mxScaleCode(bitsFloat(in[i] & kAbsMask), 448.0f);
}

// One thread per run of 64: the butterfly order is the definition, not the parallelisation.
__global__ void rhtKernel(const uint32_t* in, size_t n, uint32_t* out) {
  const size_t run = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if ((run + 1) * 64 > n) return;
  float x[64];
  for (int j = 0; j < 64; ++j) x[j] = bitsFloat(in[run * 64 + j]);
  rhtForward(x, 64, rhtSigns(1234));
  for (int j = 0; j < 64; ++j) out[run * 64 + j] = floatBits(x[j]);
}

}  // namespace

bool deviceAvailable(std::string* why) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    if (why) *why = status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device";
    return false;
  }
  return true;
}

void runElementOp(ElementOp op, const uint32_t* in, size_t n, uint32_t* out) {
  uint32_t *dIn = nullptr, *dOut = nullptr;
  check(cudaMalloc(&dIn, n * 4), "cudaMalloc");
  check(cudaMalloc(&dOut, n * 4), "cudaMalloc");
  check(cudaMemcpy(dIn, in, n * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  const unsigned threads = 256;
  const unsigned blocks = unsigned((n + threads - 1) / threads);
  switch (op) {
    case ElementOp::EncodeE4M3: encodeKernel<E4M3><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::EncodeE5M2: encodeKernel<E5M2><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::EncodeE2M1: encodeKernel<E2M1><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::EncodeUE5M3: encodeKernel<UE5M3><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::EncodeFp16: encodeKernel<Fp16><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::EncodeBf16: encodeKernel<Bf16><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::DecodeE4M3: decodeKernel<E4M3><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::DecodeE5M2: decodeKernel<E5M2><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::DecodeE2M1: decodeKernel<E2M1><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::DecodeUE5M3: decodeKernel<UE5M3><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::DecodeFp16: decodeKernel<Fp16><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::DecodeBf16: decodeKernel<Bf16><<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::StochasticE4M3: stochasticKernel<<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::MxScaleE4M3: mxScaleKernel<<<blocks, threads>>>(dIn, n, dOut); break;
    case ElementOp::RhtForward64:
      rhtKernel<<<unsigned((n / 64 + 127) / 128), 128>>>(dIn, n, dOut);
      break;
  }
  check(cudaGetLastError(), "kernel launch");
  check(cudaMemcpy(out, dOut, n * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(dIn);
  cudaFree(dOut);
}

}  // namespace qccl::cuda
