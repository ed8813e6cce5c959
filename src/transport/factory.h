// Picks and builds the transport a communicator asked for.
#pragma once

#include <memory>
#include <string>

#include "src/bootstrap/unique_id.h"
#include "src/common/deadline.h"
#include "src/transport/transport.h"

namespace qccl::transport {

// name: "ucx", "mpi", "local", or "auto" (mpi under an MPI launcher when built with MPI, else
// ucx when built with UCX, else local for a single rank). Throws Error(qcclInvalidArgument) for
// an unknown or unavailable name.
std::unique_ptr<Transport> makeTransport(const std::string& name, const qcclUniqueId& id, int rank,
                                         int size, const Deadline& deadline);

// The names this build supports, for messages.
std::string availableTransports();

}  // namespace qccl::transport
