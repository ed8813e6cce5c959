// Exact scatter (NCCL's ncclScatter): block p of the root's input to rank p, framed. Only the
// receivers learn of a disagreement, as in a broadcast.
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void scatterFromRoot(Context& context, const void* send, void* recv, size_t count,
                     qcclDataType_t dtype, int root) {
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = count * dataTypeSize(dtype);
  Workspace& ws = *context.workspace;
  Executor& exec = *context.executor;
  const auto* blocks = static_cast<const uint8_t*>(send);
  Buffer& in = ws.buffer(Slot::RootedIn, 0);
  {
    Phase phase(context);
    if (me == root) {
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        Buffer& out = ws.buffer(Slot::RootedOut, size_t(p));
        out.resize(kExactHeaderBytes + bytes);
        writeExactHeader(out.data(), dtype, root, MessageKind::ScatterBlock, count);
        exec.copy(out.data() + kExactHeaderBytes, blocks + size_t(p) * bytes, bytes);
        phase.send(p, out.data(), out.size());
      }
    } else {
      in.resize(kExactHeaderBytes + bytes);
      phase.recv(root, in.data(), in.size());
    }
    phase.wait();
  }
  if (me == root) {
    exec.copy(recv, blocks + size_t(me) * bytes, bytes);
    return;
  }
  acceptExact(context, in, dtype, root, MessageKind::ScatterBlock, count, root);
  throwIfUsageError(context);
  exec.copy(recv, in.data() + kExactHeaderBytes, bytes);
}

}  // namespace qccl::coll
