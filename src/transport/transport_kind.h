// The transports a communicator can be asked for, and their names (QCCL_TRANSPORT,
// qcclConfig_t.transport, log lines): one table for all of them. Nccl is no tagged Transport but
// the stream-ordered exchange of src/nccl (docs/TRANSPORTS.md).
#pragma once

#include <string>

namespace qccl::transport {

enum class TransportKind { Auto, Ucx, Mpi, Local, Nccl };

const char* transportName(TransportKind kind);
// Throws Error(qcclInvalidArgument) listing the names it knows.
TransportKind parseTransportKind(const std::string& name);

}  // namespace qccl::transport
