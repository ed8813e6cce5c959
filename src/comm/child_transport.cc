#include "src/comm/child_transport.h"

#include "src/common/error.h"

namespace qccl {

transport::TransportKind childTransport(const transport::Transport& parent) {
  using transport::TransportKind;
  const TransportKind kind = transport::parseTransportKind(parent.name());
  if (kind != TransportKind::Mpi) return kind;
#if QCCL_HAVE_UCX
  return TransportKind::Ucx;
#else
  throwError(qcclInvalidUsage,
             "a communicator over MPI makes its children over UCX (the MPI transport's ranks are "
             "MPI_COMM_WORLD's), and this build has no UCX");
#endif
}

}  // namespace qccl
