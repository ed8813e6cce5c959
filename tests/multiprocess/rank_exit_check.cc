// A rank that fails in the middle of a run, before the third allreduce:
//   rank_exit_check          rank 1 exits
//   rank_exit_check silent   rank 1 stays alive but stops calling (for QCCL_TIMEOUT + 3 s)
// Every other rank must get an error (qcclRemoteError or qcclTimeout) within QCCL_TIMEOUT, not
// hang. Prints "rank R survived: <error> after S s" and exits 0 on the survivors when that holds.
#include <qccl/qccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const bool silent = argc > 1 && std::string(argv[1]) == "silent";
  qcclComm_t comm;
  if (qcclCommInitFromEnv(&comm, nullptr) != qcclSuccess) {
    std::printf("init failed: %s\n", qcclGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  qcclCommUserRank(comm, &rank);
  const char* timeoutEnv = std::getenv("QCCL_TIMEOUT");
  const double timeout = timeoutEnv ? std::atof(timeoutEnv) : 300;
  std::vector<float> x(100000, 1.0f), y(x.size());
  for (int step = 0; step < 5; ++step) {
    if (rank == 1 && step == 2) {
      if (!silent) _exit(3);  // gone, mid-run, without a word
      std::this_thread::sleep_for(std::chrono::duration<double>(timeout + 3));
      _exit(3);
    }
    const auto start = std::chrono::steady_clock::now();
    const qcclResult_t rc =
        qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rc == qcclSuccess) continue;
    const bool expected =
        (rc == qcclRemoteError || rc == qcclTimeout) && step == 2 && seconds < timeout + 5;
    std::printf("rank %d %s: %s in call %d after %.1f s (%s)\n", rank,
                expected ? "survived" : "FAILED", qcclGetErrorString(rc), step, seconds,
                qcclGetLastError(nullptr));
    qcclCommAbort(comm);
    return expected ? 0 : 1;
  }
  std::printf("rank %d: FAILED, every call succeeded\n", rank);
  return 1;
}
