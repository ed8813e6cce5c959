// A small nccl-tests-like driver over NCCL's own API, for the LD_PRELOAD interposer's device check
// (perf/gpu_check.sh): it links libnccl.so.2 and nothing of qccl, so that the same binary times
// NCCL alone and, under LD_PRELOAD=libqccl_nccl.so, the compressed path. One process, one GPU, one
// rank (NCCL cannot put two ranks on one GPU): run it with QCCL_COMPRESS_ONE_RANK=1 so that the
// interposer's encode and decode run although nothing travels. Wire bytes are in the interposer's
// QCCL_DEBUG=INFO summary.
//
//   nccl_api_bench [MiB ...]     (default 1 16 64 256)
//
// Columns: collective, bytes (the larger buffer), time per call (µs, mean of 20 after 5 warm-up
// calls, CUDA events on the stream), algbw (bytes / time), relerr (L2 error of the result against
// the exact one: 0 for NCCL, the codec's error under the preload).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void cudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void ncclCheck(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
    std::exit(1);
  }
}

enum class Op { AllReduce, ReduceScatter, AllGather };

const char* name(Op op) {
  return op == Op::AllReduce       ? "allreduce"
         : op == Op::ReduceScatter ? "reducescatter"
                                   : "allgather";
}

void launch(Op op, const float* in, float* out, size_t count, ncclComm_t comm, cudaStream_t s) {
  switch (op) {
    case Op::AllReduce:
      ncclCheck(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, s), "ar");
      break;
    case Op::ReduceScatter:
      ncclCheck(ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comm, s), "rs");
      break;
    case Op::AllGather: ncclCheck(ncclAllGather(in, out, count, ncclFloat, comm, s), "ag"); break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> mib;
  for (int i = 1; i < argc; ++i) mib.push_back(size_t(std::atoll(argv[i])));
  if (mib.empty()) mib = {1, 16, 64, 256};
  ncclUniqueId id;
  ncclComm_t comm;
  ncclCheck(ncclGetUniqueId(&id), "ncclGetUniqueId");
  cudaCheck(cudaSetDevice(0), "cudaSetDevice");
  ncclCheck(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank");
  cudaStream_t stream;
  cudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t start, stop;
  cudaCheck(cudaEventCreate(&start), "event");
  cudaCheck(cudaEventCreate(&stop), "event");
  std::printf(
      "| collective | bytes | time (us) | algbw (GB/s) | relerr |\n|---|---|---|---|---|\n");
  for (size_t m : mib) {
    const size_t count = m * 1024 * 1024 / sizeof(float);
    std::vector<float> host(count), back(count);
    for (size_t i = 0; i < count; ++i)
      host[i] = float(std::sin(0.001 * double(i)) + 1e-3 * (i % 7));
    float *in, *out;
    cudaCheck(cudaMalloc(&in, count * sizeof(float)), "cudaMalloc");
    cudaCheck(cudaMalloc(&out, count * sizeof(float)), "cudaMalloc");
    cudaCheck(cudaMemcpy(in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice), "copy");
    for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather}) {
      for (int i = 0; i < 5; ++i) launch(op, in, out, count, comm, stream);
      const int iters = 20;
      cudaCheck(cudaEventRecord(start, stream), "record");
      for (int i = 0; i < iters; ++i) launch(op, in, out, count, comm, stream);
      cudaCheck(cudaEventRecord(stop, stream), "record");
      cudaCheck(cudaEventSynchronize(stop), "sync");
      float ms = 0;
      cudaCheck(cudaEventElapsedTime(&ms, start, stop), "elapsed");
      const double us = 1000.0 * ms / iters;
      // At one rank every collective's exact result is its input.
      cudaCheck(cudaMemcpy(back.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost),
                "copy");
      double err = 0, norm = 0;
      for (size_t i = 0; i < count; ++i) {
        err += double(back[i] - host[i]) * double(back[i] - host[i]);
        norm += double(host[i]) * double(host[i]);
      }
      std::printf("| %s | %zu | %.1f | %.1f | %.2e |\n", name(op), count * sizeof(float), us,
                  double(count * sizeof(float)) / us / 1e3, std::sqrt(err / norm));
    }
    cudaFree(in);
    cudaFree(out);
  }
  ncclCommDestroy(comm);
  return 0;
}
