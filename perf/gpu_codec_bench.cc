// Device codec throughput against the device's own copy bandwidth, measured in the same run:
// encode, encode with error feedback, and decode-accumulate of a 256 MiB fp32 buffer per codec,
// each as bytes read + written per second (as the copy is counted), and its share of the copy's.
// Prints a Markdown table; exit 1 if a result is not the CPU kernels' (a 1 MiB check per codec).
// Needs a GPU: perf/gpu_check.sh runs it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codecs/codec.h"
#include "codecs/cuda/codec_kernels.h"

namespace {

using namespace qccl;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "gpu_codec_bench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(2);
  }
}

// Mean seconds per run of fn over `runs`, after two warm-ups.
template <class Fn>
double timeIt(Fn&& fn, int runs) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  fn();
  fn();
  check(cudaEventRecord(start), "record");
  for (int i = 0; i < runs; ++i) fn();
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "sync");
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  check(cudaGetLastError(), "kernels");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1000.0 / runs;
}

struct Target {
  const char* spec;
  double share;  // of the copy bandwidth (docs/PERFORMANCE.md, issue targets)
};

}  // namespace

int main(int argc, char** argv) {
  const size_t count = (argc > 1 ? std::stoull(argv[1]) : 256) * (size_t(1) << 20) / 4;
  const int runs = 10;
  std::vector<float> host(count);
  std::mt19937 rng(7);
  std::student_t_distribution<float> heavy(3.0f);
  for (float& v : host) v = heavy(rng);
  void *in, *copy, *residual, *chunk, *acc;
  uint32_t *amax, *status;
  const size_t bytes = count * 4;
  check(cudaMalloc(&in, bytes), "malloc");
  check(cudaMalloc(&copy, bytes), "malloc");
  check(cudaMalloc(&residual, bytes), "malloc");
  check(cudaMalloc(&acc, bytes), "malloc");
  check(cudaMalloc(&chunk, bytes + (1 << 20)), "malloc");
  check(cudaMalloc(&amax, 4), "malloc");
  check(cudaMalloc(&status, 4), "malloc");
  check(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice), "copy");
  check(cudaMemset(residual, 0, bytes), "memset");
  check(cudaMemset(acc, 0, bytes), "memset");
  check(cudaMemset(status, 0, 4), "memset");

  const double copySeconds =
      timeIt([&] { cudaMemcpyAsync(copy, in, bytes, cudaMemcpyDeviceToDevice); }, runs);
  const double copyRate = 2.0 * bytes / copySeconds;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("# %s, %zu MiB fp32; device copy %.0f GB/s (read + write)\n\n", prop.name,
              bytes >> 20, copyRate / 1e9);
  std::printf(
      "| codec | encode GB/s | %% copy | encode+EF GB/s | %% copy | decode-acc GB/s | "
      "%% copy | target | bits |\n|---|---|---|---|---|---|---|---|---|\n");
  const Target targets[] = {{"fp8e4m3", 0.8},   {"int8", 0.8},     {"bf16", 0.8},
                            {"fp16", 0.6},      {"fp8e5m2", 0.6},  {"mxfp8", 0.6},
                            {"mxfp4", 0.6},     {"nvfp4", 0.6},    {"fp4ue5m3", 0.6},
                            {"int4", 0.6},      {"sign1", 0.6},    {"fp8e4m3+sr", 0.6},
                            {"mxfp4+sr", 0.6},  {"int8+rht", 0.4}, {"nvfp4+rht", 0.4},
                            {"mxfp4+rht", 0.4}, {"int2", 0.6}};
  bool allSame = true, allMet = true;
  for (const Target& t : targets) {
    const codec::CodecSpec spec = codec::parseCodecSpec(t.spec);
    const size_t chunkBytes = codec::encodedSize(spec, count, qcclFloat32);
    const cuda::CodecLaunch launch{spec, 1234, 0, nullptr};
    const cuda::EncodeRequest plain{in, nullptr, static_cast<uint8_t*>(chunk), count, 0, 1};
    const cuda::EncodeRequest ef{in, residual, static_cast<uint8_t*>(chunk), count, 0, 1};
    const cuda::DecodeRequest dec{static_cast<const uint8_t*>(chunk), acc, count, qcclFloat32};
    const double encode = timeIt(
        [&] { cuda::encode(launch, qcclFloat32, qcclFloat32, 1.0f, &plain, 1, amax); }, runs);
    const double encodeEf =
        timeIt([&] { cuda::encode(launch, qcclFloat32, qcclFloat32, 1.0f, &ef, 1, amax); }, runs);
    const double decodeAcc =
        timeIt([&] { cuda::decode(launch, qcclFloat32, true, &dec, 1, status, nullptr); }, runs);
    const double encodeRate = double(bytes + chunkBytes) / encode;
    const double efRate = double(3 * bytes + chunkBytes) / encodeEf;
    const double decodeRate = double(chunkBytes + 2 * bytes) / decodeAcc;
    // Bits: the first 1 MiB encoded on the device and by the CPU kernels.
    const size_t n = std::min<size_t>(count, 1 << 18);
    const size_t small = codec::encodedSize(spec, n, qcclFloat32);
    std::vector<uint8_t> want(small), got(small);
    codec::EncodeParams p;
    p.seed = 1234;
    p.call = 1;
    codec::encode(spec, host.data(), n, qcclFloat32, want.data(), small, p);
    const cuda::EncodeRequest first{in, nullptr, static_cast<uint8_t*>(chunk), n, 0, 1};
    cuda::encode(launch, qcclFloat32, qcclFloat32, 1.0f, &first, 1, amax);
    check(cudaMemcpy(got.data(), chunk, small, cudaMemcpyDeviceToHost), "copy");
    const bool same = got == want;
    const double worst = std::min({encodeRate, efRate, decodeRate}) / copyRate;
    allSame = allSame && same;
    allMet = allMet && worst >= t.share;
    std::printf("| %s | %.0f | %.0f%% | %.0f | %.0f%% | %.0f | %.0f%% | %.0f%% %s | %s |\n", t.spec,
                encodeRate / 1e9, 100 * encodeRate / copyRate, efRate / 1e9,
                100 * efRate / copyRate, decodeRate / 1e9, 100 * decodeRate / copyRate,
                100 * t.share, worst >= t.share ? "met" : "missed", same ? "same" : "DIFFER");
  }
  std::printf("\n%s; %s\n", allSame ? "every codec gives the CPU's bits" : "BITS DIFFER",
              allMet ? "every target met" : "some targets missed");
  return allSame ? 0 : 1;
}
