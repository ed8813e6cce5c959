// The transports a communicator can be asked for, and their names (QCCL_TRANSPORT,
// qcclConfig_t.transport, log lines): one table for all of them.
#pragma once

#include <string>

namespace qccl::transport {

enum class TransportKind { Auto, Ucx, Mpi, Local };

const char* transportName(TransportKind kind);
// Throws Error(qcclInvalidArgument) listing the names it knows.
TransportKind parseTransportKind(const std::string& name);

}  // namespace qccl::transport
