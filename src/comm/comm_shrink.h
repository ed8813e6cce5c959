// qcclCommShrink: the survivors of a communicator make a smaller one of themselves, renumbered in
// order, without the lost ranks' help (docs/RELIABILITY.md, "Elastic communicators").
#pragma once

#include <vector>

#include "src/comm/comm.h"

namespace qccl {

// exclude: the ranks this caller leaves out (each survivor may name others; their union is left
// out, with the ranks the survivors' agreement finds lost). config: NULL inherits the parent's
// settings. flags: QCCL_SHRINK_DEFAULT or QCCL_SHRINK_ABORT.
qcclComm_t shrinkComm(qcclComm& parent, const std::vector<int>& exclude, const qcclConfig_t* config,
                      int flags);

}  // namespace qccl
