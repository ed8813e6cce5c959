// The communicator side of every collective: the call's plan (src/comm/call_plan.h), its context
// and its error-feedback state, under the communicator's call lock (docs/ALGORITHMS.md).
#pragma once

#include "src/comm/call_plan.h"
#include "src/comm/comm.h"

namespace qccl {

void runReduction(qcclComm& comm, const ReductionCall& call);
void runBroadcast(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                  int root, cudaStream_t stream);
void runAlltoall(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 cudaStream_t stream);
void runBarrier(qcclComm& comm, cudaStream_t stream);
void runGather(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
               int root, cudaStream_t stream);
void runScatter(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                int root, cudaStream_t stream);
// qcclReduce: the allreduce of `call` (its codec, key and flags), written at the root only; host
// buffers.
void runReduce(qcclComm& comm, const ReductionCall& call, int root);
// qcclCommPredict: measures first if the communicator has not yet (a collective step).
qcclPrediction_t predictCall(qcclComm& comm, CollectiveKind kind, size_t count,
                             qcclDataType_t dtype, const codec::CodecSpec& codec);

}  // namespace qccl
