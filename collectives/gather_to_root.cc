// Exact gather (NCCL's ncclGather): every rank's block to the root, framed; the root writes block
// p of its output from rank p (its own copied). Only the root learns of a disagreement, as only
// it receives (a broadcast's receivers are in the same position).
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void gatherToRoot(Context& context, const void* send, void* recv, size_t count,
                  qcclDataType_t dtype, int root) {
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = count * dataTypeSize(dtype);
  Workspace& ws = *context.workspace;
  Executor& exec = *context.executor;
  auto in = [&](int p) -> Buffer& { return ws.buffer(Slot::RootedIn, size_t(p)); };
  {
    Phase phase(context);
    if (me == root) {
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        in(p).resize(kExactHeaderBytes + bytes);
        phase.recv(p, in(p).data(), in(p).size());
      }
    } else {
      Buffer& out = ws.buffer(Slot::RootedOut, 0);
      out.resize(kExactHeaderBytes + bytes);
      writeExactHeader(out.data(), dtype, root, MessageKind::GatherBlock, count);
      exec.copy(out.data() + kExactHeaderBytes, send, bytes);
      phase.send(root, out.data(), out.size());
    }
    phase.wait();
  }
  if (me != root) return;
  for (int p = 0; p < n; ++p) {
    if (p != me) acceptExact(context, in(p), dtype, root, MessageKind::GatherBlock, count, p);
  }
  throwIfUsageError(context);
  auto* result = static_cast<uint8_t*>(recv);
  for (int p = 0; p < n; ++p) {
    exec.copy(result + size_t(p) * bytes, p == me ? send : in(p).data() + kExactHeaderBytes, bytes);
  }
}

}  // namespace qccl::coll
