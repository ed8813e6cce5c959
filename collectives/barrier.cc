// Barrier: a header-only message from every rank to every other; no rank leaves before all
// have arrived.
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"

namespace qccl::coll {

void barrier(Context& context) {
  constexpr uint8_t kKindBarrier = 9;
  const int n = context.group.size(), me = context.group.me;
  uint8_t mine[kExactHeaderBytes];
  writeExactHeader(mine, qcclUint8, 0, kKindBarrier, 0);
  std::vector<uint8_t> in(size_t(n) * kExactHeaderBytes);
  Phase phase(context);
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    phase.recv(p, in.data() + size_t(p) * kExactHeaderBytes, kExactHeaderBytes);
    phase.send(p, mine, kExactHeaderBytes);
  }
  phase.wait();
}

}  // namespace qccl::coll
