// qcclCommGetUniqueId and qcclCommGrow: a running communicator admits new ranks, ncclCommGrow's
// meaning (docs/RELIABILITY.md, "Elastic communicators").
#pragma once

#include "src/comm/comm.h"

namespace qccl {

// A fresh unique id for growing `comm`; this process hosts its bootstrap root. Throws
// Error(qcclInvalidUsage) while the last one is not consumed by a grow.
qcclUniqueId growUniqueId(qcclComm& comm);

// A member's side: every member calls it with the same nranks (> its size); exactly one passes
// the id it had from growUniqueId, the others NULL. Members keep their ranks. Throws
// Error(qcclInvalidUsage), the same on every member, when the members disagree on nranks or do
// not hold exactly one id this communicator issued. config NULL: the parent's settings.
qcclComm_t growComm(qcclComm& parent, int nranks, const qcclUniqueId* id,
                    const qcclConfig_t* config);

}  // namespace qccl
