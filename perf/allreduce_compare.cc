// Compressed against exact allreduce on the ranks qcclrun (or mpirun) started: for each codec,
// the median time of an fp32 allreduce (Sum) of the same vector, the speedup over the exact one,
// the bytes each rank puts on the wire, and the relative L2 error against the exact result.
// Prints a table on rank 0.
//
//   qcclrun -n 4 build/perf/allreduce_compare [MiB] [codec ...]     (default: 16 MiB, six codecs)
#include <qccl/qccl.h>
#include <qccl/qccl_codec.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(qcclResult_t rc, const char* what) {
  if (rc != qcclSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, qcclGetLastError(nullptr));
    std::exit(1);
  }
}

// Median seconds of `iterations` allreduces after two warm-up ones, agreed by all ranks (max).
double timeAllreduce(qcclComm_t comm, const std::vector<float>& x, std::vector<float>& y,
                     const qcclCallConfig_t& call, int iterations) {
  std::vector<double> times;
  for (int i = -2; i < iterations; ++i) {
    check(qcclBarrier(comm, nullptr), "barrier");
    const auto start = std::chrono::steady_clock::now();
    check(qcclAllReduceEx(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr, &call),
          "allreduce");
    if (i >= 0)
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2], slowest = 0;
  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
  exact.flags = QCCL_CALL_EXACT;
  check(qcclAllReduceEx(&median, &slowest, 1, qcclFloat64, qcclMax, comm, nullptr, &exact), "time");
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  const double mib = argc > 1 ? std::atof(argv[1]) : 16;
  std::vector<std::string> codecs;
  for (int i = 2; i < argc; ++i) codecs.push_back(argv[i]);
  if (codecs.empty()) codecs = {"bf16", "fp8e4m3", "int8", "mxfp4", "nvfp4", "int4"};
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.minBytes = 0;
  qcclComm_t comm;
  check(qcclCommInitFromEnv(&comm, &config), "qcclCommInitFromEnv");
  int rank = 0, n = 1;
  qcclCommUserRank(comm, &rank);
  qcclCommCount(comm, &n);
  const size_t count = size_t(mib * (1 << 20) / 4);
  std::vector<float> x(count), exactResult(count), y(count);
  for (size_t i = 0; i < count; ++i)
    x[i] = std::sin(0.001f * float(i) * float(rank + 1)) + 0.01f * float(rank);

  qcclCallConfig_t exactCall = QCCL_CALL_CONFIG_INITIALIZER;
  exactCall.flags = QCCL_CALL_EXACT;
  const int iterations = 7;
  const double exactTime = timeAllreduce(comm, x, exactResult, exactCall, iterations);
  const double exactWire = 2.0 * (n - 1) / n * double(count) * 4;
  if (rank == 0) {
    std::printf("allreduce of %.0f MiB fp32 on %d ranks (median of %d, slowest rank)\n", mib, n,
                iterations);
    std::printf("%-12s %10s %8s %14s %8s %10s\n", "codec", "time ms", "speedup", "wire B/rank",
                "ratio", "rel. error");
    std::printf("%-12s %10.2f %8.2f %14.0f %8.2f %10.2e\n", "exact", exactTime * 1e3, 1.0,
                exactWire, 1.0, 0.0);
  }
  for (const std::string& codec : codecs) {
    qcclCallConfig_t call = QCCL_CALL_CONFIG_INITIALIZER;
    call.codec = codec.c_str();
    call.flags = QCCL_CALL_NO_EF;  // each repetition the same numerics, so the error is one call's
    const double t = timeAllreduce(comm, x, y, call, iterations);
    double e2 = 0, n2 = 0;
    for (size_t i = 0; i < count; ++i) {
      e2 += double(y[i] - exactResult[i]) * double(y[i] - exactResult[i]);
      n2 += double(exactResult[i]) * double(exactResult[i]);
    }
    // Bytes on the wire per rank: n - 1 encoded chunks out in each of the two phases.
    qcclCodec_t c;
    size_t chunkBytes = 0;
    check(qcclCodecParse(codec.c_str(), &c), "codec");
    check(qcclCodecEncodedSize(c, (count + size_t(n) - 1) / size_t(n), qcclFloat32, &chunkBytes),
          "size");
    const double wire = 2.0 * (n - 1) * double(chunkBytes);
    if (rank == 0) {
      std::printf("%-12s %10.2f %8.2f %14.0f %8.2f %10.2e\n", codec.c_str(), t * 1e3, exactTime / t,
                  wire, exactWire / wire, std::sqrt(e2 / n2));
    }
  }
  check(qcclCommFinalize(comm), "finalize");
  qcclCommDestroy(comm);
  return 0;
}
