#include "src/comm/comm.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "collectives/collectives.h"
#include "src/bootstrap/unique_id.h"
#include "src/comm/call_plan.h"
#include "src/common/error.h"
#include "src/common/log.h"
#include "src/common/siphash.h"
#include "src/transport/factory.h"

namespace qccl {

namespace {

constexpr uint64_t kCommMagic = 0x71636c636f6d6d31ull;    // "qclcomm1"
constexpr uint64_t kAdoptedSeed = 0x71636c6e63636c31ull;  // "qclnccl1"

// A destroyed or aborted communicator stays a tombstone, so a late call on it gets an error; the
// most recent kMaxTombstones stay, older ones are freed (a program that makes and destroys
// communicators in a loop must not grow without bound).
constexpr size_t kMaxTombstones = 1024;

struct Registry {
  std::mutex mutex;
  std::set<const qcclComm*> comms;   // live and tombstones
  std::deque<qcclComm*> tombstones;  // oldest first
};

// Never destroyed: communicators may be used and destroyed during static destruction, and what
// it points to stays reachable for LeakSanitizer at exit.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

// Ranks per group for "hier": the configured size, else the ranks per host when every host has
// the same number of consecutive ranks; 0 when neither works.
int hierGroupSize(const Settings& s, const std::vector<std::string>& hosts) {
  const int n = int(hosts.size());
  if (s.groupSize > 0) return n % s.groupSize == 0 ? s.groupSize : 0;
  int perHost = 1;
  while (perHost < n && hosts[size_t(perHost)] == hosts[0]) ++perHost;
  if (n % perHost != 0) return 0;
  for (int r = 0; r < n; ++r) {
    if (hosts[size_t(r)] != hosts[size_t(r / perHost * perHost)]) return 0;
  }
  return perHost;
}

}  // namespace

namespace {

// The steps every new communicator ends with: error-feedback state, a log line, the registry.
qcclComm_t registerComm(std::unique_ptr<qcclComm> comm) {
  const Settings& settings = comm->settings;
  comm->ef = std::make_unique<ef::EfStore>(settings.efDtype);
  comm->magic = kCommMagic;
  const std::string minBytes =
      settings.minBytesAuto ? std::string("auto") : std::to_string(settings.minBytes);
  QCCL_INFO(kLogInit, "comm %p rank %d of %d: transport %s, codec %s, min bytes %s, EF %s",
            static_cast<void*>(comm.get()), comm->rank, comm->nranks,
            comm->transport ? comm->transport->name() : comm->nccl->name(),
            codec::codecName(settings.codec).c_str(), minBytes.c_str(),
            settings.errorFeedback ? (settings.efDtype == qcclFloat32 ? "fp32" : "bf16") : "off");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.comms.insert(comm.get());
  return comm.release();
}

}  // namespace

qcclComm_t createComm(int nranks, const qcclUniqueId& id, int rank, const qcclConfig_t* config) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    throwError(qcclInvalidArgument, "rank %d is out of range for %d ranks", rank, nranks);
  }
  return createComm(nranks, id, rank, resolveSettings(config));
}

qcclComm_t createComm(int nranks, const qcclUniqueId& id, int rank, const Settings& settings) {
  setLogRank(rank);
  const bootstrap::RootInfo root = bootstrap::decodeUniqueId(id);
  auto comm = std::make_unique<qcclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->settings = settings;
  comm->seed = sipHash24(root.secret.data(), "qccl-seed", 9);
  const Deadline deadline = Deadline::after(settings.timeout);
  std::vector<std::string> hosts;
  if (settings.transport == transport::TransportKind::Nccl) {
    comm->nccl = std::make_unique<nccl::NcclExchange>(root, rank, nranks, deadline, &hosts);
  } else {
    comm->transport = transport::makeTransport(settings.transport, id, rank, nranks, deadline);
    hosts = comm->transport->hosts();
  }
  // auto: whether device buffers use NCCL is settled at the first call on them.
  comm->ncclSettled = settings.transport != transport::TransportKind::Auto;
  comm->hierGroupSize = hierGroupSize(settings, hosts);
  comm->autoMinBytes = AutoMinBytes(
      int(std::count(hosts.begin(), hosts.end(), hosts.empty() ? "" : hosts[size_t(rank)])),
      allreduceAlgorithm(settings, {nranks, comm->hierGroupSize}), comm->hierGroupSize);
  return registerComm(std::move(comm));
}

qcclComm_t adoptNccl(ncclComm* ncclComm, const qcclConfig_t* config) {
  if (ncclComm == nullptr) throwError(qcclInvalidArgument, "ncclComm is NULL");
  const Settings settings = resolveSettings(config);
  auto comm = std::make_unique<qcclComm>();
  comm->nccl = std::make_unique<nccl::NcclExchange>(static_cast<nccl::Comm>(ncclComm));
  comm->rank = comm->nccl->rank();
  comm->nranks = comm->nccl->size();
  setLogRank(comm->rank);
  comm->settings = settings;
  // No unique id to derive a seed from: every adopted communicator shares this one (it keys the
  // +rht signs, which must agree across ranks; +sr streams differ by rank and call anyway).
  comm->seed = kAdoptedSeed;
  comm->ncclSettled = true;
  comm->hierGroupSize =
      settings.groupSize > 0 && comm->nranks % settings.groupSize == 0 ? settings.groupSize : 0;
  return registerComm(std::move(comm));
}

qcclComm& knownComm(qcclComm_t comm) {
  if (comm == nullptr) throwError(qcclInvalidArgument, "comm is NULL");
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.comms.count(comm) == 0) {
      throwError(qcclInvalidArgument, "comm %p is not a communicator made by qcclCommInitRank",
                 static_cast<void*>(comm));
    }
  }
  if (comm->state.load() == qcclComm::State::Destroyed) {
    throwError(qcclInvalidUsage, "the communicator was destroyed");
  }
  return *comm;
}

qcclComm& usableComm(qcclComm_t comm) {
  qcclComm& c = knownComm(comm);
  switch (c.state.load()) {
    case qcclComm::State::Aborted: throwError(qcclInvalidUsage, "the communicator was aborted");
    case qcclComm::State::Failed:
      throwError(qcclInvalidUsage, "the communicator failed earlier (%s); destroy it",
                 c.failure.c_str());
    default: return c;
  }
}

qcclResult_t asyncErrorOf(qcclComm& comm) {
  switch (comm.state.load()) {
    case qcclComm::State::Live:
      // A device decode's error is seen here first (the next call also fails for it).
      return comm.device && comm.device->asyncError() ? qcclInvalidUsage : qcclSuccess;
    case qcclComm::State::Failed: return comm.failureCode;
    default: return qcclInvalidUsage;
  }
}

namespace {
// Keeps comm as a tombstone, freeing the oldest beyond kMaxTombstones.
void entomb(qcclComm& comm) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.tombstones.push_back(&comm);
  if (r.tombstones.size() <= kMaxTombstones) return;
  qcclComm* oldest = r.tombstones.front();
  r.tombstones.pop_front();
  r.comms.erase(oldest);
  delete oldest;
}

void release(qcclComm& comm, qcclComm::State final) {
  comm.ef.reset();
  comm.workspace = coll::Workspace();
  comm.deviceWorkspace.reset();
  comm.staging.reset();
  comm.nccl.reset();
  comm.device.reset();
  comm.transport.reset();
  comm.p2p = PointToPoint();  // its messages were the transport's
  const qcclComm::State before = comm.state.exchange(final);
  if (before != qcclComm::State::Aborted && before != qcclComm::State::Destroyed) entomb(comm);
}
}  // namespace

void destroyComm(qcclComm& comm) {
  std::lock_guard<std::mutex> lock(comm.callMutex);
  release(comm, qcclComm::State::Destroyed);
}

void inheritResiduals(qcclComm& child, const qcclComm& parent) {
  if (parent.ef && child.ef) child.ef->inheritWorkers(*parent.ef);
}

void abortComm(qcclComm& comm) {
  comm.aborted.store(true);  // a call in flight sees this and returns
  std::lock_guard<std::mutex> lock(comm.callMutex);
  if (comm.nccl) comm.nccl->abort();
  release(comm, qcclComm::State::Aborted);
}

}  // namespace qccl
