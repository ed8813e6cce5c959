// StreamExchange over NCCL: the communicator's own NCCL communicator (made at init, its unique id
// passed through qccl's bootstrap) or one adopted from the application, and the stream of the
// call in flight.
#pragma once

#include <string>
#include <vector>

#include "collectives/stream_exchange.h"
#include "src/bootstrap/unique_id.h"
#include "src/common/deadline.h"
#include "src/nccl/nccl_library.h"

namespace qccl::nccl {

class NcclExchange : public coll::StreamExchange {
 public:
  // Makes an NCCL communicator of nranks: rank 0's NCCL unique id reaches the others through the
  // bootstrap root of `root`. hosts receives every rank's host name, in rank order.
  NcclExchange(const bootstrap::RootInfo& root, int rank, int nranks, const Deadline& deadline,
               std::vector<std::string>* hosts);
  // Makes an NCCL communicator from an NCCL unique id already shared among the ranks.
  NcclExchange(const UniqueId& id, int rank, int nranks);
  // Adopts an application's communicator: used, never destroyed.
  explicit NcclExchange(Comm adopted);
  ~NcclExchange() override;

  Comm comm() const { return comm_; }
  int rank() const;
  int size() const;
  // The stream the next operations run on (the call's).
  void setStream(cudaStream_t stream) { stream_ = stream; }
  // Stops the communicator (ncclCommAbort), also while another thread waits in it.
  void abort();

  const char* name() const override { return "nccl"; }
  bool takesHostMemory() const override { return lib_.takesHostMemory; }
  void groupStart() override;
  void send(int peer, const void* data, size_t bytes) override;
  void recv(int peer, void* data, size_t bytes) override;
  void groupEnd() override;
  void allReduce(const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 qcclRedOp_t op) override;
  void reduceScatter(const void* send, void* recv, size_t recvCount, qcclDataType_t dtype,
                     qcclRedOp_t op) override;
  void allGather(const void* send, void* recv, size_t sendCount, qcclDataType_t dtype) override;
  void broadcast(const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 int root) override;

 private:
  // Throws for a failed call; waits out a nonblocking communicator's ncclInProgress first.
  void settle(Result result, const char* what) const;

  const Library& lib_;
  Comm comm_ = nullptr;
  bool owned_ = false;
  cudaStream_t stream_ = nullptr;
};

}  // namespace qccl::nccl
