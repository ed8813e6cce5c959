#include "src/interposer/call_dispatch.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "codecs/codec_spec.h"
#include "src/comm/auto_min_bytes.h"
#include "src/comm/collective_calls.h"
#include "src/comm/comm.h"
#include "src/comm/settings.h"
#include "src/common/error.h"
#include "src/common/log.h"
#include "src/interposer/intercepted_comm.h"
#include "src/interposer/real_nccl.h"

namespace qccl::interposer {

namespace {

struct DeferredCall {
  ReductionCall call;
  nccl::Comm comm;
  std::string decision;
};

thread_local int groupDepth = 0;
thread_local std::vector<DeferredCall> deferred;  // compressed calls of the open group

// QCCL_* from the environment, read at the first call. The adopted communicators resolve the
// same variables, so their plans agree with this decision.
const Settings& settings() {
  static const Settings resolved = resolveSettings(nullptr);
  return resolved;
}

// Whether qccl compresses the call; `decision` says how, or why not. Arguments planCall refuses
// (NCCL's own datatypes and ops qccl does not know, such as PreMulSum) are NCCL's to judge.
bool decide(const InterceptedComm& state, const ReductionCall& call, std::string* decision) {
  CallPlan plan;
  try {
    plan = planCall(settings(), {state.nranks(), 0}, call);
    // NCCL moves the bytes: QCCL_MIN_BYTES=auto is its fixed size there (auto_min_bytes.h).
    if (settings().minBytesAuto) applyAutoMinBytes(plan, kStreamAutoMinBytes);
  } catch (const Error& e) {
    *decision = std::string("passed through: ") + e.what();
    return false;
  }
  if (!plan.compressed()) {
    *decision = std::string("passed through: ") + describe(plan.exactReason);
    return false;
  }
  *decision = "compressed as " + codec::codecName(plan.codec) +
              (plan.errorFeedback ? " with error feedback" : "");
  return true;
}

nccl::Result forward(const ReductionCall& c, nccl::Comm comm) {
  const RealNccl& real = realNccl();
  switch (c.kind) {
    case CollectiveKind::AllReduce:
      return real.allReduce(c.send, c.recv, c.count, c.dtype, c.op, comm, c.stream);
    case CollectiveKind::ReduceScatter:
      return real.reduceScatter(c.send, c.recv, c.count, c.dtype, c.op, comm, c.stream);
    case CollectiveKind::AllGather:
      return real.allGather(c.send, c.recv, c.count, c.dtype, comm, c.stream);
  }
  return nccl::Result(qcclInternalError);
}

nccl::Result runCompressed(InterceptedComm& state, const ReductionCall& call) {
  runReduction(state.adopted(), call);
  return nccl::kSuccess;
}

// Runs body, turning a thrown Error into its NCCL result code and a WARN line.
template <class Body>
nccl::Result reported(const char* what, Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    QCCL_WARN("libqccl_nccl.so: %s: %s", what, e.what());
    return nccl::Result(e.code());
  } catch (const std::exception& e) {
    QCCL_WARN("libqccl_nccl.so: %s: internal error: %s", what, e.what());
    return nccl::Result(qcclInternalError);
  }
}

}  // namespace

nccl::Result dispatch(const ReductionCall& call, nccl::Comm comm) {
  return reported(collectiveName(call.kind), [&] {
    if (comm == nullptr) return forward(call, comm);  // NCCL's error for it
    const std::shared_ptr<InterceptedComm> state = interceptedComm(comm);
    std::string decision;
    const bool compress = decide(*state, call, &decision);
    if (compress && groupDepth > 0) {  // recorded when the group ends decides its fate
      deferred.push_back({call, comm, decision});
      return nccl::kSuccess;
    }
    state->record(call, compress, decision);
    return compress ? runCompressed(*state, call) : forward(call, comm);
  });
}

nccl::Result groupStart() {
  return reported("ncclGroupStart", [] {
    const nccl::Result result = realNccl().groupStart();
    if (result == nccl::kSuccess) ++groupDepth;
    return result;
  });
}

nccl::Result groupEnd() {
  return reported("ncclGroupEnd", [] {
    const RealNccl& real = realNccl();
    if (groupDepth == 0 || --groupDepth > 0) return real.groupEnd();
    std::vector<DeferredCall> calls = std::move(deferred);
    deferred.clear();
    std::set<nccl::Comm> comms;
    for (const DeferredCall& d : calls) comms.insert(d.comm);
    if (comms.size() > 1) {
      const std::string why = "passed through: in a group whose compressible calls span " +
                              std::to_string(comms.size()) + " communicators";
      for (const DeferredCall& d : calls) {
        interceptedComm(d.comm)->record(d.call, false, why);
        if (nccl::Result r = forward(d.call, d.comm); r != nccl::kSuccess) {
          real.groupEnd();
          return r;
        }
      }
      return real.groupEnd();
    }
    nccl::Result ended = real.groupEnd();
    // A nonblocking communicator is still enqueuing the group: NCCL's rule is to wait for that
    // (ncclCommGetAsyncError) before the next call on it.
    for (auto comm = comms.begin(); ended == nccl::kInProgress && comm != comms.end(); ++comm) {
      do {
        std::this_thread::yield();
        if (real.commGetAsyncError(*comm, &ended) != nccl::kSuccess) break;
      } while (ended == nccl::kInProgress);
    }
    if (ended != nccl::kSuccess) return ended;
    for (const DeferredCall& d : calls) {
      const std::shared_ptr<InterceptedComm> state = interceptedComm(d.comm);
      state->record(d.call, true, d.decision + ", after its group ended");
      runCompressed(*state, d.call);
    }
    return nccl::kSuccess;
  });
}

nccl::Result groupSimulateEnd(void* simInfo) {
  return reported("ncclGroupSimulateEnd", [&] {
    const RealNccl& real = realNccl();
    if (real.groupSimulateEnd == nullptr) {
      throwError(qcclInvalidUsage, "%s has no ncclGroupSimulateEnd", real.path.c_str());
    }
    if (groupDepth > 0 && --groupDepth == 0) deferred.clear();
    return real.groupSimulateEnd(simInfo);
  });
}

nccl::Result destroy(nccl::Comm comm) {
  return reported("ncclCommDestroy", [&] {
    if (std::shared_ptr<InterceptedComm> state = forgetComm(comm)) state->close(/*abort=*/false);
    return realNccl().commDestroy(comm);
  });
}

nccl::Result abort(nccl::Comm comm) {
  return reported("ncclCommAbort", [&] {
    std::shared_ptr<InterceptedComm> state = forgetComm(comm);
    const nccl::Result result = realNccl().commAbort(comm);
    if (state) state->close(/*abort=*/true);
    return result;
  });
}

}  // namespace qccl::interposer
