// Where a communicator's unique id comes from: a fresh one (qcclGetUniqueId), or the launcher's
// environment (qcclCommInitFromEnv).
#pragma once

#include "qccl/qccl.h"

namespace qccl {

// A new id; the calling process hosts the bootstrap root.
qcclUniqueId newUniqueId();

struct LaunchInfo {
  int rank = 0;
  int size = 0;
  qcclUniqueId id;
};

// From qcclrun (QCCL_RANK, QCCL_WORLD_SIZE, QCCL_COMM_ID), torchrun (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT; QCCL_PORT, QCCL_SECRET) or Open MPI (OMPI_COMM_WORLD_RANK/SIZE, the id
// broadcast over MPI). Throws Error(qcclInvalidUsage) when none is present.
LaunchInfo launchInfoFromEnv();

}  // namespace qccl
