// What the interposer keeps beside each of the application's NCCL communicators: the qccl
// communicator that adopts it (made at its first compressed call: workspace and error-feedback
// residuals live there), which call shapes it has met, and the counters the summary reports.
// Made at a communicator's first intercepted call (so communicators from ncclCommSplit, Shrink or
// any init call need no interception), dropped at ncclCommDestroy / ncclCommAbort.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "qccl/qccl.h"
#include "src/comm/call_plan.h"
#include "src/nccl/nccl_abi.h"

namespace qccl::interposer {

class InterceptedComm {
 public:
  InterceptedComm(nccl::Comm comm, int nranks) : comm_(comm), nranks_(nranks) {}
  ~InterceptedComm();

  int nranks() const { return nranks_; }
  // Counts a call and, at QCCL_DEBUG=INFO, says once per (collective, op, dtype, count) and
  // decision what became of it: "compressed as <codec>" or "passed through: <why>".
  void record(const ReductionCall& call, bool compressed, const std::string& decision);
  // The qccl communicator over this NCCL communicator, adopted at the first use.
  qcclComm& adopted();
  // At QCCL_DEBUG=INFO, once: calls and bytes compressed and passed through, wire bytes.
  void summarize();
  // Ends the state: the summary, then the qccl communicator destroyed (abort: aborted).
  void close(bool abort);

 private:
  void summarizeLocked();

  nccl::Comm comm_;
  int nranks_;
  std::mutex mutex_;
  qcclComm* adopted_ = nullptr;
  bool closed_ = false;
  bool summarized_ = false;
  // (collective, op, dtype, count, decision)
  std::set<std::tuple<int, int, int, size_t, std::string>> seen_;
  uint64_t compressedCalls_ = 0, compressedBytes_ = 0;
  uint64_t passedCalls_ = 0, passedBytes_ = 0;
};

// The state of `comm`, made at its first call (NCCL is asked for its size). Throws Error.
std::shared_ptr<InterceptedComm> interceptedComm(nccl::Comm comm);
// Removes the state of `comm` (NULL if it had none); calls still running keep their reference.
std::shared_ptr<InterceptedComm> forgetComm(nccl::Comm comm);

}  // namespace qccl::interposer
