// Shared-mask collectives (docs/ALGORITHMS.md, "Shared-mask collectives"): reduce-scatter and
// all-gather of the values under a mask every rank holds, so that no index travels; the values in
// the call's codec with error feedback over the whole buffer's coordinates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/comm/comm.h"

namespace qccl {

struct MaskedCall {
  bool reduce;  // reduce-scatter (send holds nranks shards); else all-gather (recv does)
  const void* send;
  void* recv;
  size_t shard;  // elements of one rank's shard: recvcount (reduce-scatter), sendcount (all-gather)
  qcclDataType_t dtype;
  qcclRedOp_t op;       // reduce-scatter: qcclSum or qcclAvg
  const uint8_t* mask;  // nranks * shard bits, element i at bit i % 8 of byte i / 8
  cudaStream_t stream;
  const qcclCallConfig_t* config;  // may be NULL
};

// Checks the arguments (qcclInvalidArgument), agrees the mask with every rank (a mask that differs
// anywhere: qcclInvalidUsage on every rank, nothing written) and runs the call.
void runMasked(qcclComm& comm, const MaskedCall& call);

}  // namespace qccl
