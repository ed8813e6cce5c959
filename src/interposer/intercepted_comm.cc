#include "src/interposer/intercepted_comm.h"

#include <cstdlib>
#include <map>

#include "codecs/codec_spec.h"
#include "collectives/reduction.h"
#include "collectives/type_names.h"
#include "src/comm/comm.h"
#include "src/common/error.h"
#include "src/common/log.h"
#include "src/interposer/real_nccl.h"

namespace qccl::interposer {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<nccl::Comm, std::shared_ptr<InterceptedComm>> comms;
};

// Communicators the application never destroys (processes often exit with theirs alive) still
// get their summary line, at exit; nothing is torn down then (CUDA may be gone already).
void summarizeAtExit();

Registry& registry() {
  static Registry* r = [] {
    // The log's settings are made first, so that they outlive the exit handler that logs.
    logEnabled(LogLevel::Info, kLogInit);
    std::atexit(summarizeAtExit);
    return new Registry;  // never destroyed: calls may still arrive from other threads at exit
  }();
  return *r;
}

void summarizeAtExit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& entry : r.comms) entry.second->summarize();
}

size_t callBytes(const ReductionCall& call, int nranks) {
  const size_t factor =
      call.kind == CollectiveKind::AllReduce ? 1 : static_cast<size_t>(nranks);  // the larger side
  return call.count * factor * coll::dataTypeSize(call.dtype);
}

}  // namespace

InterceptedComm::~InterceptedComm() = default;

void InterceptedComm::record(const ReductionCall& call, bool compressed,
                             const std::string& decision) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t bytes = callBytes(call, nranks_);
  (compressed ? compressedCalls_ : passedCalls_) += 1;
  (compressed ? compressedBytes_ : passedBytes_) += bytes;
  const bool reduces = call.kind != CollectiveKind::AllGather;
  if (seen_
          .insert(
              {int(call.kind), reduces ? int(call.op) : 0, int(call.dtype), call.count, decision})
          .second) {
    QCCL_INFO(kLogInit, "nccl comm %p: %s%s%s %s count %zu (%llu bytes): %s", comm_,
              collectiveName(call.kind), reduces ? " " : "",
              reduces ? coll::redOpName(call.op) : "", coll::dataTypeName(call.dtype), call.count,
              static_cast<unsigned long long>(bytes), decision.c_str());
  }
}

qcclComm& InterceptedComm::adopted() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) throwError(qcclInvalidUsage, "the NCCL communicator was destroyed");
  if (adopted_ == nullptr) adopted_ = adoptNccl(static_cast<ncclComm*>(comm_), nullptr);
  return *adopted_;
}

void InterceptedComm::summarize() {
  std::lock_guard<std::mutex> lock(mutex_);
  summarizeLocked();
}

void InterceptedComm::summarizeLocked() {
  if (summarized_) return;
  summarized_ = true;
  uint64_t wire = 0;
  ef::EfStore::KeyCounts keys;
  if (adopted_ != nullptr) {
    std::lock_guard<std::mutex> lock(adopted_->callMutex);
    wire = adopted_->wire.sent;
    if (adopted_->ef) keys = adopted_->ef->keyCounts();
  }
  QCCL_INFO(kLogInit,
            "nccl comm %p summary: %llu calls compressed (%llu bytes in, %llu bytes sent on the "
            "wire by this rank), %llu passed through (%llu bytes); error feedback keys: %zu live, "
            "%llu made, %llu dropped as moved or gone",
            comm_, static_cast<unsigned long long>(compressedCalls_),
            static_cast<unsigned long long>(compressedBytes_),
            static_cast<unsigned long long>(wire), static_cast<unsigned long long>(passedCalls_),
            static_cast<unsigned long long>(passedBytes_), keys.live,
            static_cast<unsigned long long>(keys.made),
            static_cast<unsigned long long>(keys.dropped));
}

void InterceptedComm::close(bool abort) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return;
  closed_ = true;
  summarizeLocked();
  if (adopted_ == nullptr) return;
  abort ? abortComm(*adopted_) : destroyComm(*adopted_);
}

std::shared_ptr<InterceptedComm> interceptedComm(nccl::Comm comm) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.comms.find(comm);
    if (it != r.comms.end()) return it->second;
  }
  int nranks = 0, rank = 0;
  const RealNccl& real = realNccl();
  if (real.commCount(comm, &nranks) != nccl::kSuccess ||
      real.commUserRank(comm, &rank) != nccl::kSuccess) {
    throwError(qcclInvalidArgument, "comm %p is not a usable NCCL communicator", comm);
  }
  setLogRank(rank);
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& state = r.comms[comm];
  if (!state) state = std::make_shared<InterceptedComm>(comm, nranks);
  return state;
}

std::shared_ptr<InterceptedComm> forgetComm(nccl::Comm comm) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.comms.find(comm);
  if (it == r.comms.end()) return nullptr;
  std::shared_ptr<InterceptedComm> state = std::move(it->second);
  r.comms.erase(it);
  return state;
}

}  // namespace qccl::interposer
