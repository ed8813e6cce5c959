// The collectives in stream order, over a StreamExchange (NCCL): the same plans as the
// tagged-transport schedules (ScatterPlan, GatherPlan: the same encodes, residuals, reductions in
// rank order and decodes, so the same bits), issued as a few batches in order: every encode, one
// group of sends and receives, every reduction, and so on. Nothing waits on the host, so device
// calls stay asynchronous and a CUDA graph can capture them. Chunks are not cut into segments:
// work on one stream has nothing to overlap. Exact calls are the exchange library's own
// collectives (NCCL's bits).
//
// Ranks that disagree on a call are found where the executor reads headers: on host memory (the
// test suite's stand-in NCCL) as with the tagged schedules, every rank getting qcclInvalidUsage;
// device decode kernels skip a chunk that does not match and raise the communicator's
// asynchronous error (docs/API.md).
#pragma once

#include "collectives/collectives.h"

namespace qccl::coll {

void allreduceStream(Context& context, const ReduceArgs& args, bool compressed);
void reduceScatterStream(Context& context, const ReduceArgs& args, bool compressed);
void allgatherStream(Context& context, const void* send, void* recv, size_t sendCount,
                     qcclDataType_t dtype, bool compressed, GatherMode mode);
void broadcastStream(Context& context, const void* send, void* recv, size_t count,
                     qcclDataType_t dtype, int root);
void alltoallStream(Context& context, const void* send, void* recv, size_t count,
                    qcclDataType_t dtype);
void barrierStream(Context& context);

}  // namespace qccl::coll
