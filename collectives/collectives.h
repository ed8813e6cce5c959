// The collectives, written against the Transport and codec interfaces only (docs/ALGORITHMS.md).
// Each runs every one of its message phases even after it has found that the ranks disagree
// (it then sends "poison" instead of data), so every rank returns qcclInvalidUsage rather than
// some of them waiting for messages that never come. compressed = false takes the exact path.
#pragma once

#include "collectives/context.h"

namespace qccl::coll {

enum class AllreduceAlgorithm { Sra, Ring, Hier, Gather };

// What a compressed allgather writes: every shard decoded; the own shard kept exact
// (QCCL_CALL_KEEP_OWN_SHARD); or every shard's decoded change added to what recv holds
// (QCCL_CALL_DELTA).
enum class GatherMode { Decoded, KeepOwnExact, Delta };

struct ReduceArgs {
  const void* send;
  void* recv;
  size_t count;  // allreduce: the vector; reduce-scatter: each rank's share
  qcclDataType_t dtype;
  qcclRedOp_t op;
};

// hierGroups: for Hier, the groups of global ranks (each the same size, consecutive in rank
// order of the context's group); ignored otherwise.
void allreduce(Context& context, const ReduceArgs& args, bool compressed,
               AllreduceAlgorithm algorithm, int hierGroupSize);
void reduceScatter(Context& context, const ReduceArgs& args, bool compressed);
void allgather(Context& context, const void* send, void* recv, size_t sendCount,
               qcclDataType_t dtype, bool compressed, GatherMode mode);
void broadcast(Context& context, const void* send, void* recv, size_t count, qcclDataType_t dtype,
               int root);
void alltoall(Context& context, const void* send, void* recv, size_t count, qcclDataType_t dtype);
// NCCL's ncclGather and ncclScatter: count elements per rank, exact.
void gatherToRoot(Context& context, const void* send, void* recv, size_t count,
                  qcclDataType_t dtype, int root);
void scatterFromRoot(Context& context, const void* send, void* recv, size_t count,
                     qcclDataType_t dtype, int root);
void barrier(Context& context);

// Throws Error(qcclInvalidUsage) with the recorded disagreement, if any.
void throwIfUsageError(const Context& context);

}  // namespace qccl::coll
