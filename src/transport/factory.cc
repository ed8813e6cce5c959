#include "src/transport/factory.h"

#include "src/common/error.h"
#include "src/transport/local_transport.h"
#if QCCL_HAVE_UCX
#include "src/transport/ucx_transport.h"
#endif
#if QCCL_HAVE_MPI
#include "src/transport/mpi_transport.h"
#endif

namespace qccl::transport {

std::string availableTransports() {
  std::string names = transportName(TransportKind::Local);
#if QCCL_HAVE_UCX
  names += std::string(", ") + transportName(TransportKind::Ucx);
#endif
#if QCCL_HAVE_MPI
  names += std::string(", ") + transportName(TransportKind::Mpi);
#endif
  return names;
}

namespace {

TransportKind resolveAuto(int size) {
#if QCCL_HAVE_MPI
  if (MpiTransport::launchedByMpi()) return TransportKind::Mpi;
#endif
#if QCCL_HAVE_UCX
  return TransportKind::Ucx;
#endif
  if (size == 1) return TransportKind::Local;
  throwError(qcclInvalidUsage,
             "QCCL_TRANSPORT=auto: this build has neither UCX nor MPI; only 'local' (ranks as "
             "threads of one process) is available");
}

}  // namespace

std::unique_ptr<Transport> makeTransport(TransportKind requested, const qcclUniqueId& id, int rank,
                                         int size, const Deadline& deadline) {
  const TransportKind kind = requested == TransportKind::Auto ? resolveAuto(size) : requested;
  // Checks the id for every transport; only UCX's bootstrap uses what it holds.
  [[maybe_unused]] const bootstrap::RootInfo root = bootstrap::decodeUniqueId(id);
  if (kind == TransportKind::Local) {
    return std::make_unique<LocalTransport>(std::string(id.internal, sizeof id.internal), rank,
                                            size, deadline);
  }
#if QCCL_HAVE_UCX
  if (kind == TransportKind::Ucx) return std::make_unique<UcxTransport>(root, rank, size, deadline);
#endif
#if QCCL_HAVE_MPI
  if (kind == TransportKind::Mpi) return std::make_unique<MpiTransport>(rank, size);
#endif
  throwError(qcclInvalidArgument, "transport '%s' is not available in this build (available: %s)",
             transportName(kind), availableTransports().c_str());
}

}  // namespace qccl::transport
