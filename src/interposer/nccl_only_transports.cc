// The transport factory of libqccl_nccl.so: the interposer's communicators adopt the
// application's NCCL communicators and move every byte with them, so it carries no host transport
// (and a process it is preloaded into loads neither UCX nor MPI because of it).
#include "src/common/error.h"
#include "src/transport/factory.h"

namespace qccl::transport {

std::string availableTransports() { return "none (libqccl_nccl.so uses the application's NCCL)"; }

std::unique_ptr<Transport> makeTransport(TransportKind requested, const qcclUniqueId&, int, int,
                                         const Deadline&) {
  throwError(qcclInvalidUsage, "libqccl_nccl.so has no '%s' transport: %s",
             transportName(requested), availableTransports().c_str());
}

}  // namespace qccl::transport
