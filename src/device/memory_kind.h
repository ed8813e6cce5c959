// Where a buffer lives: host memory, or a GPU's (device or managed memory), asked of the CUDA
// driver. A process in which the driver was never loaded has no device memory, so the answer is
// host without touching CUDA (no context is created for host-only jobs on GPU machines).
#pragma once

#include "collectives/memory.h"

namespace qccl::device {

struct Placement {
  coll::MemoryKind kind = coll::MemoryKind::Host;
  int device = -1;  // the GPU of device memory
};

Placement placementOf(const void* pointer);

}  // namespace qccl::device
