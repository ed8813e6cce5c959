// Picks and builds the transport a communicator asked for.
#pragma once

#include <memory>
#include <string>

#include "src/bootstrap/unique_id.h"
#include "src/common/deadline.h"
#include "src/transport/transport.h"
#include "src/transport/transport_kind.h"

namespace qccl::transport {

// Auto: mpi under an MPI launcher when built with MPI, else ucx when built with UCX, else local
// for a single rank. Throws Error(qcclInvalidArgument) for a transport this build lacks.
std::unique_ptr<Transport> makeTransport(TransportKind kind, const qcclUniqueId& id, int rank,
                                         int size, const Deadline& deadline);

// The names this build supports, for messages.
std::string availableTransports();

}  // namespace qccl::transport
