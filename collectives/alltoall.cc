// Exact all-to-all: block p of every rank's buffer goes to rank p, framed.
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void alltoall(Context& context, const void* send, void* recv, size_t count, qcclDataType_t dtype) {
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = count * dataTypeSize(dtype);
  const auto* in = static_cast<const uint8_t*>(send);
  Workspace& ws = *context.workspace;
  Executor& exec = *context.executor;
  auto out = [&](int p) -> Buffer& { return ws.buffer(Slot::AlltoallOut, size_t(p)); };
  auto got = [&](int p) -> Buffer& { return ws.buffer(Slot::AlltoallIn, size_t(p)); };
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      out(p).resize(kExactHeaderBytes + bytes);
      writeExactHeader(out(p).data(), dtype, 0, MessageKind::AlltoallBlock, count);
      exec.copy(out(p).data() + kExactHeaderBytes, in + size_t(p) * bytes, bytes);
      got(p).resize(kExactHeaderBytes + bytes);
      phase.recv(p, got(p).data(), got(p).size());
      phase.send(p, out(p).data(), out(p).size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    acceptExact(context, got(p), dtype, 0, MessageKind::AlltoallBlock, count, p);
  }
  throwIfUsageError(context);
  auto* result = static_cast<uint8_t*>(recv);
  exec.copy(result + size_t(me) * bytes, in + size_t(me) * bytes, bytes);
  for (int p = 0; p < n; ++p) {
    if (p != me) exec.copy(result + size_t(p) * bytes, got(p).data() + kExactHeaderBytes, bytes);
  }
}

}  // namespace qccl::coll
