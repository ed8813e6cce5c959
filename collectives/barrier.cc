// Barrier: a header-only message from every rank to every other; no rank leaves before all
// have arrived.
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"

namespace qccl::coll {

void barrier(Context& context) {
  uint8_t mine[kExactHeaderBytes];
  writeExactHeader(mine, qcclUint8, 0, MessageKind::Barrier, 0);
  std::vector<uint8_t> in(size_t(context.group.size()) * kExactHeaderBytes);
  exchangeWithAll(context, mine, kExactHeaderBytes, in.data());
}

}  // namespace qccl::coll
