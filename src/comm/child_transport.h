// The transport of a communicator made from a running one (qcclCommShrink, qcclCommGrow).
#pragma once

#include "src/transport/transport.h"
#include "src/transport/transport_kind.h"

namespace qccl {

// The parent's kind, except MPI's: the MPI transport's ranks are MPI_COMM_WORLD's, and Open MPI
// 4.1 has neither ULFM (to make a communicator of a subset after a failure) nor a way to take in
// processes started apart from the job, so the child runs over UCX, bootstrapped through a unique
// id. Throws Error(qcclInvalidUsage) for an MPI parent in a build without UCX.
transport::TransportKind childTransport(const transport::Transport& parent);

}  // namespace qccl
