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
  std::string names = "local";
#if QCCL_HAVE_UCX
  names += ", ucx";
#endif
#if QCCL_HAVE_MPI
  names += ", mpi";
#endif
  return names;
}

namespace {

std::string resolveAuto(int size) {
#if QCCL_HAVE_MPI
  if (MpiTransport::launchedByMpi()) return "mpi";
#endif
#if QCCL_HAVE_UCX
  return "ucx";
#endif
  if (size == 1) return "local";
  throwError(qcclInvalidUsage,
             "QCCL_TRANSPORT=auto: this build has neither UCX nor MPI; only 'local' (ranks as "
             "threads of one process) is available");
}

}  // namespace

std::unique_ptr<Transport> makeTransport(const std::string& requested, const qcclUniqueId& id,
                                         int rank, int size, const Deadline& deadline) {
  const std::string name = requested == "auto" ? resolveAuto(size) : requested;
  const bootstrap::RootInfo root = bootstrap::decodeUniqueId(id);
  if (name == "local") {
    return std::make_unique<LocalTransport>(std::string(id.internal, sizeof id.internal), rank,
                                            size, deadline);
  }
#if QCCL_HAVE_UCX
  if (name == "ucx") return std::make_unique<UcxTransport>(root, rank, size, deadline);
#endif
#if QCCL_HAVE_MPI
  if (name == "mpi") return std::make_unique<MpiTransport>(rank, size);
#endif
  throwError(qcclInvalidArgument, "transport '%s' is not available in this build (available: %s)",
             name.c_str(), availableTransports().c_str());
}

}  // namespace qccl::transport
