#include "src/nccl/nccl_exchange.h"

#include <cstring>
#include <thread>

#include "src/bootstrap/exchange.h"
#include "src/common/error.h"
#include "src/common/host_name.h"

namespace qccl::nccl {

NcclExchange::NcclExchange(const bootstrap::RootInfo& root, int rank, int nranks,
                           const Deadline& deadline, std::vector<std::string>* hosts)
    : lib_(library()) {
  // Payload: host name, NUL, then (rank 0 only) the NCCL unique id.
  std::string payload = hostName();
  payload.push_back('\0');
  if (rank == 0) {
    UniqueId id;
    check(lib_.getUniqueId(&id), "ncclGetUniqueId");
    payload.append(id.internal, sizeof id.internal);
  }
  const std::vector<std::string> all =
      bootstrap::exchangeThroughRoot(root, rank, nranks, payload, deadline);
  const std::string& first = all[0];
  const size_t idAt = first.find('\0') + 1;
  if (idAt == 0 || first.size() - idAt != sizeof(UniqueId)) {
    throwError(qcclInternalError, "bootstrap: rank 0 sent no NCCL unique id");
  }
  UniqueId id;
  std::memcpy(id.internal, first.data() + idAt, sizeof id.internal);
  if (hosts) {
    hosts->clear();
    for (const std::string& p : all) hosts->push_back(p.substr(0, p.find('\0')));
  }
  check(lib_.commInitRank(&comm_, nranks, id, rank), "ncclCommInitRank");
  owned_ = true;
}

NcclExchange::NcclExchange(const UniqueId& id, int rank, int nranks) : lib_(library()) {
  check(lib_.commInitRank(&comm_, nranks, id, rank), "ncclCommInitRank");
  owned_ = true;
}

NcclExchange::NcclExchange(Comm adopted) : lib_(library()), comm_(adopted) {}

NcclExchange::~NcclExchange() {
  if (owned_ && comm_) lib_.commDestroy(comm_);
}

int NcclExchange::rank() const {
  int r = 0;
  check(lib_.commUserRank(comm_, &r), "ncclCommUserRank", comm_);
  return r;
}

int NcclExchange::size() const {
  int n = 0;
  check(lib_.commCount(comm_, &n), "ncclCommCount", comm_);
  return n;
}

void NcclExchange::abort() {
  if (owned_ && comm_) {
    lib_.commAbort(comm_);
    comm_ = nullptr;
  }
}

void NcclExchange::settle(Result result, const char* what) const {
  // A nonblocking communicator (NCCL's config.blocking = 0) answers ncclInProgress while it
  // enqueues; NCCL's rule is to poll ncclCommGetAsyncError until that is done.
  while (result == kInProgress) {
    std::this_thread::yield();
    check(lib_.commGetAsyncError(comm_, &result), "ncclCommGetAsyncError", comm_);
  }
  check(result, what, comm_);
}

void NcclExchange::groupStart() { check(lib_.groupStart(), "ncclGroupStart", comm_); }

void NcclExchange::send(int peer, const void* data, size_t bytes) {
  settle(lib_.send(data, bytes, kUint8, peer, comm_, stream_), "ncclSend");
}

void NcclExchange::recv(int peer, void* data, size_t bytes) {
  settle(lib_.recv(data, bytes, kUint8, peer, comm_, stream_), "ncclRecv");
}

void NcclExchange::groupEnd() { settle(lib_.groupEnd(), "ncclGroupEnd"); }

void NcclExchange::allReduce(const void* send, void* recv, size_t count, qcclDataType_t dtype,
                             qcclRedOp_t op) {
  settle(lib_.allReduce(send, recv, count, dtype, op, comm_, stream_), "ncclAllReduce");
}

void NcclExchange::reduceScatter(const void* send, void* recv, size_t recvCount,
                                 qcclDataType_t dtype, qcclRedOp_t op) {
  settle(lib_.reduceScatter(send, recv, recvCount, dtype, op, comm_, stream_), "ncclReduceScatter");
}

void NcclExchange::allGather(const void* send, void* recv, size_t sendCount, qcclDataType_t dtype) {
  settle(lib_.allGather(send, recv, sendCount, dtype, comm_, stream_), "ncclAllGather");
}

void NcclExchange::broadcast(const void* send, void* recv, size_t count, qcclDataType_t dtype,
                             int root) {
  settle(lib_.broadcast(send, recv, count, dtype, root, comm_, stream_), "ncclBroadcast");
}

}  // namespace qccl::nccl
