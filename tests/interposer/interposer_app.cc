// An application of NCCL, as a training framework uses it, for the interposer's tests
// (tests/python/test_interposer.py): it links libnccl.so.2 (the stand-in NCCL of
// tests/standin_nccl, which takes host memory) and knows nothing of qccl. Run with or without
// LD_PRELOAD=libqccl_nccl.so, it forks its ranks as processes, makes two NCCL communicators, runs a
// fixed list of calls (single ones, repeated ones, groups) and writes every result to
// OUTDIR/<case>.rank<r>.bin for the test to compare between runs.
//
//   interposer_app NRANKS OUTDIR
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "codecs/element/minifloat.h"
#include "src/nccl/nccl_abi.h"

using qccl::nccl::Comm;
using qccl::nccl::Result;
using qccl::nccl::UniqueId;

// NCCL's declarations, as an application sees them in nccl.h.
extern "C" {
Result ncclGetUniqueId(UniqueId* id);
Result ncclCommInitRank(Comm* comm, int nranks, UniqueId id, int rank);
Result ncclCommDestroy(Comm comm);
Result ncclCommAbort(Comm comm);
Result ncclGroupStart();
Result ncclGroupEnd();
Result ncclAllReduce(const void*, void*, size_t, int, int, Comm, cudaStream_t);
Result ncclReduceScatter(const void*, void*, size_t, int, int, Comm, cudaStream_t);
Result ncclAllGather(const void*, void*, size_t, int, Comm, cudaStream_t);
const char* ncclGetLastError(Comm comm);
}

namespace {

constexpr int kInt32 = 2, kFloat16 = 6, kFloat32 = 7, kBfloat16 = 9;
constexpr int kSum = 0, kMax = 2, kAvg = 4;
constexpr int kSteps = 8;  // repeated calls on the same buffers: error feedback carries over

struct Rank {
  int rank;
  int nranks;
  std::string outdir;
};

void check(Result r, const char* what) {
  if (r == 0) return;
  std::fprintf(stderr, "interposer_app: %s failed with NCCL result %d: %s\n", what, r,
               ncclGetLastError(nullptr));
  std::exit(1);
}

// Values of a smooth gradient-like signal, different on every rank.
std::vector<float> signal(size_t n, int rank) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = float(std::sin(0.0007 * double(i) * (rank + 1)) * (1.0 + 0.25 * rank) +
                 0.01 * double(i % 17));
  }
  return v;
}

template <class Format>
std::vector<uint16_t> narrow(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = uint16_t(qccl::encodeRne<Format>(v[i]));
  return out;
}

template <class T>
void write(const Rank& r, const std::string& name, const std::vector<T>& data, bool append) {
  const std::string path = r.outdir + "/" + name + ".rank" + std::to_string(r.rank) + ".bin";
  FILE* f = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (f == nullptr || std::fwrite(data.data(), sizeof(T), data.size(), f) != data.size()) {
    std::fprintf(stderr, "interposer_app: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fclose(f);
}

void runRank(const Rank& r, const UniqueId& idA, const UniqueId& idB) {
  Comm a = nullptr, b = nullptr;
  check(ncclCommInitRank(&a, r.nranks, idA, r.rank), "ncclCommInitRank");
  check(ncclCommInitRank(&b, r.nranks, idB, r.rank), "ncclCommInitRank");
  const size_t n = 65536, shard = 16384;

  // A DDP bucket: the same buffers reduced at every step.
  const std::vector<float> grad = signal(n, r.rank);
  std::vector<float> out(n);
  for (int step = 0; step < kSteps; ++step) {
    check(ncclAllReduce(grad.data(), out.data(), n, kFloat32, kSum, a, nullptr), "allreduce");
    write(r, "allreduce_fp32_sum", out, step > 0);
  }
  const std::vector<uint16_t> gradBf16 = narrow<qccl::Bf16>(grad);
  std::vector<uint16_t> outBf16(n);
  check(ncclAllReduce(gradBf16.data(), outBf16.data(), n, kBfloat16, kAvg, a, nullptr),
        "allreduce bf16");
  write(r, "allreduce_bf16_avg", outBf16, false);
  // FSDP: gradients reduce-scattered, parameters all-gathered.
  const std::vector<float> full = signal(shard * size_t(r.nranks), r.rank);
  std::vector<float> mine(shard);
  check(ncclReduceScatter(full.data(), mine.data(), shard, kFloat32, kSum, a, nullptr),
        "reducescatter");
  write(r, "reducescatter_fp32_sum", mine, false);
  const std::vector<uint16_t> param = narrow<qccl::Fp16>(signal(shard, r.rank));
  std::vector<uint16_t> params(shard * size_t(r.nranks));
  check(ncclAllGather(param.data(), params.data(), shard, kFloat16, a, nullptr), "allgather");
  write(r, "allgather_fp16", params, false);
  // Calls the interposer passes through: an integer dtype, Max, a small message.
  std::vector<int32_t> counts(n), summed(n);
  for (size_t i = 0; i < n; ++i) counts[i] = int32_t(i * 7 + size_t(r.rank));
  check(ncclAllReduce(counts.data(), summed.data(), n, kInt32, kSum, a, nullptr), "int32");
  write(r, "allreduce_int32_sum", summed, false);
  check(ncclAllReduce(grad.data(), out.data(), n, kFloat32, kMax, a, nullptr), "max");
  write(r, "allreduce_fp32_max", out, false);
  std::vector<float> small(64);
  check(ncclAllReduce(grad.data(), small.data(), 64, kFloat32, kSum, a, nullptr), "small");
  write(r, "allreduce_fp32_small", small, false);
  // A group on one communicator: the compressible call deferred, the others in NCCL's group.
  std::vector<float> grouped(n), gathered(shard * size_t(r.nranks));
  check(ncclGroupStart(), "ncclGroupStart");
  check(ncclAllReduce(grad.data(), grouped.data(), n, kFloat32, kSum, a, nullptr), "group");
  check(ncclAllReduce(counts.data(), summed.data(), n, kInt32, kSum, a, nullptr), "group");
  check(ncclAllGather(full.data(), gathered.data(), shard, kFloat32, a, nullptr), "group");
  check(ncclGroupEnd(), "ncclGroupEnd");
  write(r, "group_allreduce_fp32", grouped, false);
  write(r, "group_allreduce_int32", summed, false);
  write(r, "group_allgather_fp32", gathered, false);
  // A second communicator of the same ranks, and a group over both.
  check(ncclAllReduce(grad.data(), out.data(), n, kFloat32, kSum, b, nullptr), "second comm");
  write(r, "second_comm_allreduce_fp32", out, false);
  std::vector<float> onA(n), onB(n);
  check(ncclGroupStart(), "ncclGroupStart");
  check(ncclAllReduce(grad.data(), onA.data(), n, kFloat32, kSum, a, nullptr), "two comms");
  check(ncclAllReduce(grad.data(), onB.data(), n, kFloat32, kSum, b, nullptr), "two comms");
  check(ncclGroupEnd(), "ncclGroupEnd");
  write(r, "two_comm_group_a", onA, false);
  write(r, "two_comm_group_b", onB, false);
  check(ncclCommAbort(b), "ncclCommAbort");  // the interposer's state goes with it too
  check(ncclCommDestroy(a), "ncclCommDestroy");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: interposer_app NRANKS OUTDIR\n");
    return 2;
  }
  const int nranks = std::atoi(argv[1]);
  // Ranks 1.. are forked before any thread exists; rank 0 makes the ids and pipes them over.
  std::vector<int> writers;
  std::vector<pid_t> children;
  int rank = 0, reader = -1;
  for (int r = 1; r < nranks; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {
      rank = r;
      reader = fds[0];
      close(fds[1]);
      break;
    }
    close(fds[0]);
    writers.push_back(fds[1]);
    children.push_back(pid);
  }
  UniqueId ids[2];
  if (rank == 0) {
    check(ncclGetUniqueId(&ids[0]), "ncclGetUniqueId");
    check(ncclGetUniqueId(&ids[1]), "ncclGetUniqueId");
    for (int w : writers) {
      if (::write(w, ids, sizeof ids) != ssize_t(sizeof ids)) return 1;
      close(w);
    }
  } else if (read(reader, ids, sizeof ids) != ssize_t(sizeof ids)) {
    return 1;
  }
  runRank({rank, nranks, argv[2]}, ids[0], ids[1]);
  int status = 0;
  for (pid_t child : children) {
    int s = 0;
    waitpid(child, &s, 0);
    if (!WIFEXITED(s) || WEXITSTATUS(s) != 0) status = 1;
  }
  return status;
}
