#include "src/comm/comm_shrink.h"

#include <chrono>

#include "src/comm/child_transport.h"
#include "src/comm/survivor_agreement.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

qcclComm_t shrinkComm(qcclComm& parent, const std::vector<int>& exclude, const qcclConfig_t* config,
                      int flags) {
  if ((flags & ~QCCL_SHRINK_ABORT) != 0) {
    throwError(qcclInvalidArgument, "unknown flags 0x%x", unsigned(flags));
  }
  std::vector<bool> lost(size_t(parent.nranks), false);
  for (int r : exclude) {
    if (r < 0 || r >= parent.nranks) {
      throwError(qcclInvalidArgument, "excluded rank %d is out of range for %d ranks", r,
                 parent.nranks);
    }
    if (r == parent.rank) {
      throwError(qcclInvalidArgument, "rank %d excludes itself (excluded ranks do not call it)", r);
    }
    lost[size_t(r)] = true;
  }
  Settings settings = config ? resolveSettings(config) : parent.settings;
  std::lock_guard<std::mutex> lock(parent.callMutex);
  if (!parent.transport) {
    throwError(qcclInvalidUsage,
               "the survivors agree over a host transport (ucx, mpi, local); "
               "this communicator has only NCCL");
  }
  if (parent.p2p.pending() > 0 && !(flags & QCCL_SHRINK_ABORT)) {
    throwError(qcclInvalidUsage,
               "%zu point-to-point message(s) still pending on the parent: wait "
               "for them, or pass QCCL_SHRINK_ABORT to cancel them",
               parent.p2p.pending());
  }
  if (flags & QCCL_SHRINK_ABORT) parent.p2p.cancelAll(parent);
  settings.transport = childTransport(*parent.transport);
  const auto start = std::chrono::steady_clock::now();
  std::vector<bool> suspects(size_t(parent.nranks), false);
  for (int r : parent.silentPeers) suspects[size_t(r)] = true;
  const SurvivorDecision decision = agreeOnSurvivors(*parent.transport, parent.shrinkRounds++, lost,
                                                     suspects, parent.settings.timeout);
  int size = 0, rank = 0;
  for (int r = 0; r < parent.nranks; ++r) {
    if (decision.lost[size_t(r)]) continue;
    if (r < parent.rank) ++rank;
    ++size;
  }
  qcclComm_t child = createComm(size, decision.id, rank, settings);
  inheritResiduals(*child, parent);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::string gone;
  for (int r = 0; r < parent.nranks; ++r) {
    if (decision.lost[size_t(r)]) gone += (gone.empty() ? "" : ",") + std::to_string(r);
  }
  QCCL_INFO(kLogInit, "shrink: rank %d of %d is rank %d of %d (left out: %s) in %.0f ms",
            parent.rank, parent.nranks, rank, size, gone.empty() ? "none" : gone.c_str(), ms);
  return child;
}

}  // namespace qccl
