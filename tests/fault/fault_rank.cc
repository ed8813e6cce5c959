// One rank of a fault-injection run (tests/fault/fault_matrix.py): every rank runs compressed
// allreduces with error feedback until a call fails, while the victim (the last rank) fails in
// the way the case names:
//   kill-before    SIGKILLs itself after init, before any collective
//   kill-during    SIGKILLs itself from another thread 2 ms into its third collective
//   kill-between   SIGKILLs itself after its second collective, while the others are in the third
//   stop           is SIGSTOPped (by a child it forks) for QCCL_TIMEOUT + 1 s before its third
//                  collective, then resumed
//   exit-destroyed destroys its communicator after its second collective and exits 0
//   abort          rank 0 calls qcclCommAbort from another thread while its third collective
//                  blocks (the victim sleeps 2 s before calling it)
// Each rank whose call fails prints one line the driver parses:
//   RESULT rank=R case=C error=CODE seconds=S clean=0|1
// with S the failing call's duration (for abort on rank 0: from the abort to the call's return;
// for the stopped rank: from its resumption)
// and clean=1 when qcclCommAbort and qcclCommDestroy then succeed. A rank whose calls all
// succeed prints error=0.
//
//   fault_rank CASE shrink VICTIMS
// makes the last VICTIMS ranks fail (not abort), and every survivor whose call fails then shrinks
// the communicator to the survivors (qcclCommShrink, naming nobody) and checks the smaller one:
// an exact allreduce of one flag per old rank must name exactly the survivors, another of integer
// values must equal their exact sum, and a compressed (fp8e4m3 + EF) allreduce's result is hashed
// for the driver to compare across survivors. It prints
//   SHRINK rank=R size=K seconds=S exact=0|1 hash=H (message)
// with S from its failing call's start to the new communicator's return, or a SHRINK line with
// size=0 when the shrink failed.
#include <qccl/qccl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) {
    h = (h ^ static_cast<const uint8_t*>(data)[i]) * 1099511628211ull;
  }
  return h;
}

// A survivor's side of the shrink mode (see the top): shrink, check, print the SHRINK line.
void shrinkAndCheck(qcclComm_t comm, int oldRank, int oldSize, Clock::time_point callStart) {
  qcclComm_t child = nullptr;
  if (qcclCommShrink(comm, nullptr, 0, &child, nullptr, QCCL_SHRINK_DEFAULT) != qcclSuccess) {
    std::printf("SHRINK rank=%d size=0 seconds=%.3f exact=0 hash=0 (%s)\n", oldRank,
                secondsSince(callStart), qcclGetLastError(nullptr));
    return;
  }
  const double seconds = secondsSince(callStart);
  int size = 0;
  qcclCommCount(child, &size);
  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
  exact.flags = QCCL_CALL_EXACT;
  std::vector<float> flag(static_cast<size_t>(oldSize), 0.0f), alive(flag.size());
  flag[size_t(oldRank)] = 1;
  std::vector<float> x(100003), sum(x.size()), y(1 << 20), z(y.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((oldRank + 1) * int(1 + i % 7));
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(i % 97) * 0.01f + float(oldRank);
  bool exactOk = qcclAllReduceEx(flag.data(), alive.data(), flag.size(), qcclFloat32, qcclSum,
                                 child, nullptr, &exact) == qcclSuccess &&
                 qcclAllReduceEx(x.data(), sum.data(), x.size(), qcclFloat32, qcclSum, child,
                                 nullptr, &exact) == qcclSuccess;
  const bool compressedOk = qcclAllReduce(y.data(), z.data(), y.size(), qcclFloat32, qcclSum, child,
                                          nullptr) == qcclSuccess;
  std::string message = exactOk && compressedOk ? "" : qcclGetLastError(child);
  int survivors = 0, weight = 0;  // the exact sums the survivors' set implies
  for (int r = 0; r < oldSize && exactOk; ++r) {
    if (alive[size_t(r)] != 0.0f && alive[size_t(r)] != 1.0f) exactOk = false;
    if (alive[size_t(r)] == 1.0f) {
      ++survivors;
      weight += r + 1;
    }
  }
  exactOk = exactOk && survivors == size && alive[size_t(oldRank)] == 1.0f;
  for (size_t i = 0; i < x.size() && exactOk; ++i) {
    if (sum[i] != float(weight * int(1 + i % 7))) exactOk = false;
  }
  std::printf("SHRINK rank=%d size=%d seconds=%.3f exact=%d hash=%016llx (%s)\n", oldRank, size,
              seconds, exactOk ? 1 : 0,
              static_cast<unsigned long long>(compressedOk ? fnv1a(z.data(), z.size() * 4) : 0),
              message.c_str());
  qcclCommDestroy(child);
}

// Stops the calling process for `seconds`, from a child, and returns at once; the process
// stops as soon as the child runs. *resumed receives the steady clock's time of the SIGCONT (the
// clock is the system's monotonic one, the same in both processes): shared memory.
void stopMyselfFor(double seconds, std::atomic<int64_t>* resumed) {
  const pid_t parent = getpid();
  if (fork() == 0) {
    kill(parent, SIGSTOP);
    usleep(useconds_t(seconds * 1e6));
    resumed->store(Clock::now().time_since_epoch().count());
    kill(parent, SIGCONT);
    _exit(0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fault_rank CASE [shrink VICTIMS]\n");
    return 2;
  }
  const std::string faultCase = argv[1];
  const bool shrink = argc >= 4 && std::string(argv[2]) == "shrink";
  const int victims = shrink ? std::atoi(argv[3]) : 1;
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.codec = "fp8e4m3";
  qcclComm_t comm;
  if (qcclCommInitFromEnv(&comm, &config) != qcclSuccess) {
    std::printf("RESULT rank=-1 case=%s error=-1 seconds=0 clean=0 (%s)\n", faultCase.c_str(),
                qcclGetLastError(nullptr));
    return 1;
  }
  int rank = 0, nranks = 0;
  qcclCommUserRank(comm, &rank);
  qcclCommCount(comm, &nranks);
  const bool victim = rank >= nranks - victims;
  const char* timeoutEnv = std::getenv("QCCL_TIMEOUT");
  const double timeout = timeoutEnv ? std::atof(timeoutEnv) : 300;

  std::vector<float> x(1 << 20), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 97) * 0.01f + float(rank);
  std::atomic<double> abortedAt{0};
  auto* resumed = static_cast<std::atomic<int64_t>*>(mmap(nullptr, sizeof(std::atomic<int64_t>),
                                                          PROT_READ | PROT_WRITE,
                                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  resumed->store(0);
  std::thread helper;
  const Clock::time_point t0 = Clock::now();

  if (victim && faultCase == "kill-before") raise(SIGKILL);
  for (int step = 0; step < 50; ++step) {
    if (step == 2 && victim) {
      if (faultCase == "kill-between") raise(SIGKILL);
      if (faultCase == "exit-destroyed") {
        qcclCommDestroy(comm);
        std::exit(0);
      }
      if (faultCase == "stop") {
        stopMyselfFor(timeout + 1, resumed);
        usleep(200000);  // stopped here, before the call: nobody gets this rank's part of it
      }
      if (faultCase == "kill-during") {
        helper = std::thread([] {
          usleep(2000);
          raise(SIGKILL);
        });
      }
      if (faultCase == "abort") usleep(2000000);
    }
    if (step == 2 && rank == 0 && faultCase == "abort") {
      helper = std::thread([&] {
        usleep(200000);
        abortedAt = secondsSince(t0);
        qcclCommAbort(comm);
      });
    }
    const Clock::time_point start = Clock::now();
    const qcclResult_t rc =
        qcclAllReduce(x.data(), y.data(), x.size(), qcclFloat32, qcclSum, comm, nullptr);
    double seconds = secondsSince(start);
    if (rc == qcclSuccess) continue;
    const std::string message = qcclGetLastError(comm);
    if (shrink && !victim) {
      std::printf("RESULT rank=%d case=%s error=%d seconds=%.3f clean=1 (%s)\n", rank,
                  faultCase.c_str(), int(rc), seconds, message.c_str());
      shrinkAndCheck(comm, rank, nranks, start);
      std::fflush(stdout);
      qcclCommDestroy(comm);
      return 0;
    }
    if (helper.joinable()) helper.join();
    if (abortedAt > 0) seconds = secondsSince(t0) - abortedAt;
    if (resumed->load() != 0) {  // the stopped rank: from its resumption
      const Clock::time_point back{Clock::duration(resumed->load())};
      seconds = std::chrono::duration<double>(Clock::now() - std::max(back, start)).count();
    }
    // After an abort from the helper the communicator is aborted already; abort again is allowed.
    const bool clean = qcclCommAbort(comm) == qcclSuccess && qcclCommDestroy(comm) == qcclSuccess;
    std::printf("RESULT rank=%d case=%s error=%d seconds=%.3f clean=%d (%s)\n", rank,
                faultCase.c_str(), int(rc), seconds, clean ? 1 : 0, message.c_str());
    return 0;
  }
  std::printf("RESULT rank=%d case=%s error=0 seconds=0 clean=1\n", rank, faultCase.c_str());
  if (helper.joinable()) helper.join();
  qcclCommDestroy(comm);
  return 0;
}
