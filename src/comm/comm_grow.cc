#include "src/comm/comm_grow.h"

#include <chrono>
#include <cstring>
#include <vector>

#include "src/comm/child_transport.h"
#include "src/comm/collective_calls.h"
#include "src/comm/unique_id_source.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

// What each member brings to the grow; the members gather everyone's, so that each of them checks
// the same facts and fails, or goes on, with the others.
struct Offer {
  enum : uint8_t { NoId = 0, IssuedId = 1, ForeignId = 2 };
  uint8_t idState = NoId;
  uint8_t pad[3] = {};
  int32_t nranks = 0;
  qcclUniqueId id{};
};
static_assert(sizeof(Offer) == 8 + sizeof(qcclUniqueId), "an Offer travels as plain bytes");

std::vector<Offer> gatherOffers(qcclComm& parent, const Offer& mine) {
  std::vector<Offer> all(size_t(parent.nranks));
  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
  exact.flags = QCCL_CALL_EXACT;
  runReduction(parent, {CollectiveKind::AllGather, &mine, all.data(), sizeof(Offer), qcclUint8,
                        qcclSum, nullptr, &exact});
  return all;
}

// The id the grow uses, after checking that the members agree.
qcclUniqueId agreedId(const std::vector<Offer>& offers) {
  const Offer* root = nullptr;
  for (size_t r = 0; r < offers.size(); ++r) {
    const Offer& o = offers[r];
    if (o.nranks != offers[0].nranks) {
      throwError(qcclInvalidUsage,
                 "the members disagree on the new size (rank 0: %d, rank %zu: %d)",
                 offers[0].nranks, r, o.nranks);
    }
    if (o.idState == Offer::ForeignId) {
      throwError(qcclInvalidUsage,
                 "rank %zu passed a unique id that qcclCommGetUniqueId did not give "
                 "it for this communicator (or one a grow consumed already)",
                 r);
    }
    if (o.idState == Offer::IssuedId) {
      if (root != nullptr) {
        throwError(qcclInvalidUsage,
                   "more than one member passed a unique id (rank %zu among them): "
                   "one passes it, the others NULL",
                   r);
      }
      root = &o;
    }
  }
  if (root == nullptr) {
    throwError(qcclInvalidUsage,
               "no member passed the unique id (the member that had it from "
               "qcclCommGetUniqueId passes it, the others NULL)");
  }
  return root->id;
}

}  // namespace

qcclUniqueId growUniqueId(qcclComm& comm) {
  std::lock_guard<std::mutex> lock(comm.callMutex);
  if (comm.growId) {
    throwError(qcclInvalidUsage,
               "the last id this communicator gave is not consumed yet (grow "
               "with it first)");
  }
  comm.growId = newUniqueId();
  return *comm.growId;
}

qcclComm_t growComm(qcclComm& parent, int nranks, const qcclUniqueId* id,
                    const qcclConfig_t* config) {
  if (nranks <= parent.nranks) {
    throwError(qcclInvalidArgument, "nRanks %d is not more than the communicator's %d ranks",
               nranks, parent.nranks);
  }
  if (!parent.transport) {
    throwError(qcclInvalidUsage,
               "members agree over a host transport (ucx, mpi, local); this "
               "communicator has only NCCL");
  }
  Settings settings = config ? resolveSettings(config) : parent.settings;
  settings.transport = childTransport(*parent.transport);
  Offer mine;
  mine.nranks = nranks;
  if (id != nullptr) {
    std::lock_guard<std::mutex> lock(parent.callMutex);
    const bool issued = parent.growId && std::memcmp(&*parent.growId, id, sizeof *id) == 0;
    mine.idState = issued ? Offer::IssuedId : Offer::ForeignId;
    mine.id = *id;
    parent.growId.reset();  // consumed, whatever comes of the grow
  }
  const auto start = std::chrono::steady_clock::now();
  const qcclUniqueId agreed = agreedId(gatherOffers(parent, mine));
  qcclComm_t child = createComm(nranks, agreed, parent.rank, settings);
  {
    std::lock_guard<std::mutex> lock(parent.callMutex);
    inheritResiduals(*child, parent);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  QCCL_INFO(kLogInit, "grow: rank %d of %d is rank %d of %d in %.0f ms", parent.rank, parent.nranks,
            parent.rank, nranks, ms);
  return child;
}

}  // namespace qccl
