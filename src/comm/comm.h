// The communicator behind qcclComm_t: settings, transports, executors, error-feedback state, call
// counter, and its lifecycle. A destroyed or aborted communicator keeps a small tombstone, so a
// call on it fails with a clear error rather than touching freed memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "collectives/context.h"
#include "qccl/qccl.h"
#include "src/comm/auto_min_bytes.h"
#include "src/comm/point_to_point.h"
#include "src/comm/settings.h"
#include "src/device/device_executor.h"
#include "src/ef/ef_store.h"
#include "src/nccl/nccl_exchange.h"
#include "src/transport/transport.h"

struct qcclComm {
  enum class State { Live, Failed, Aborted, Destroyed };

  uint64_t magic = 0;
  std::atomic<State> state{State::Live};
  std::string failure;  // the error that made the communicator unusable
  qcclResult_t failureCode = qcclSuccess;
  int rank = 0;
  int nranks = 0;
  qccl::Settings settings;
  qccl::AutoMinBytes autoMinBytes;  // QCCL_MIN_BYTES=auto: measured at the first call needing it
  int hierGroupSize = 0;            // 0: hier unavailable (uneven groups), sra is used instead
  uint64_t seed = 0;
  uint64_t sequence = 1;
  std::atomic<bool> aborted{false};
  std::set<int> silentPeers;  // ranks a call timed out waiting for: suspects for qcclCommShrink
  qccl::coll::FailureNotice failureNotice;  // other ranks' notices of calls they gave up
  uint64_t gaveUp = 0;  // the call this rank gave up: its notices' payload, alive while they go
  uint32_t shrinkRounds = 0;  // survivor agreements run on this communicator (their messages' tags)
  std::optional<qcclUniqueId> growId;  // from qcclCommGetUniqueId, until a grow consumes it
  std::mutex callMutex;                // one call at a time; abort waits for the call in flight
  std::unique_ptr<qccl::transport::Transport> transport;  // tagged: host buffers
  // Device buffers (src/comm/call_route.h): the executor on their GPU, made at the first call on
  // GPU memory, and NCCL as the stream-ordered exchange (made at init for QCCL_TRANSPORT=nccl,
  // adopted by qcclCommInitFromNccl, else made at that first call; or none, and device buffers
  // are staged through pinned host memory over the tagged transport).
  std::unique_ptr<qccl::device::DeviceExecutor> device;
  std::unique_ptr<qccl::nccl::NcclExchange> nccl;
  bool ncclSettled = false;  // whether device calls use NCCL is decided
  // Destroyed before the executor whose memory they may hold:
  std::unique_ptr<qccl::ef::EfStore> ef;
  qccl::coll::WireCounters wire;
  qccl::PointToPoint p2p;           // point-to-point messages in flight
  qccl::coll::Workspace workspace;  // the collectives' buffers, kept between calls
  std::unique_ptr<qccl::coll::Workspace> deviceWorkspace;
  std::unique_ptr<qccl::coll::Workspace> staging;  // pinned: device buffers over host transports
};

namespace qccl {

qcclComm_t createComm(int nranks, const qcclUniqueId& id, int rank, const qcclConfig_t* config);
// The same with settings already resolved (a shrunk communicator inherits its parent's).
qcclComm_t createComm(int nranks, const qcclUniqueId& id, int rank, const Settings& settings);
// A communicator over an application's NCCL communicator (used, never destroyed).
qcclComm_t adoptNccl(ncclComm* ncclComm, const qcclConfig_t* config);

// The communicator, if it can take a call; throws Error (qcclInvalidArgument for NULL or a
// pointer that is no communicator, qcclInvalidUsage for a destroyed, aborted or failed one).
qcclComm& usableComm(qcclComm_t comm);
// Like usableComm, but accepts failed and aborted ones (for destroy).
qcclComm& knownComm(qcclComm_t comm);

// qcclCommGetAsyncError: qcclSuccess, or why the communicator cannot take calls.
qcclResult_t asyncErrorOf(qcclComm& comm);
// A communicator made from `parent` on this rank (qcclCommShrink, qcclCommGrow) takes its worker
// residuals (docs/ERROR_FEEDBACK.md, "Across a shrink or a grow"). The caller holds the parent's
// call lock.
void inheritResiduals(qcclComm& child, const qcclComm& parent);
void destroyComm(qcclComm& comm);
void abortComm(qcclComm& comm);

}  // namespace qccl
