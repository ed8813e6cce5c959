// The communicator side of every collective: argument checks, the exact-or-compressed decision,
// the error-feedback key, and the collective's context (docs/ALGORITHMS.md).
#pragma once

#include "src/comm/comm.h"

namespace qccl {

enum class CollectiveKind { AllReduce = 1, ReduceScatter = 2, AllGather = 3 };

struct ReductionCall {
  CollectiveKind kind;
  const void* send;
  void* recv;
  size_t count;  // allreduce: the vector; reduce-scatter: recvcount; allgather: sendcount
  qcclDataType_t dtype;
  qcclRedOp_t op;  // ignored for allgather
  cudaStream_t stream;
  const qcclCallConfig_t* config;  // may be NULL
};

void runReduction(qcclComm& comm, const ReductionCall& call);
void runBroadcast(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                  int root, cudaStream_t stream);
void runAlltoall(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 cudaStream_t stream);
void runBarrier(qcclComm& comm, cudaStream_t stream);

}  // namespace qccl
