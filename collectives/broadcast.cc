// Exact broadcast: the root sends its framed buffer to every other rank.
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void broadcast(Context& context, const void* send, void* recv, size_t count, qcclDataType_t dtype,
               int root) {
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = count * dataTypeSize(dtype);
  Buffer& message = context.workspace->buffer(Slot::BroadcastMessage, 0);
  message.resize(kExactHeaderBytes + bytes);
  {
    Phase phase(context);
    if (me == root) {
      writeExactHeader(message.data(), dtype, root, MessageKind::Broadcast, count);
      context.executor->copy(message.data() + kExactHeaderBytes, send, bytes);
      for (int p = 0; p < n; ++p) {
        if (p != me) phase.send(p, message.data(), message.size());
      }
    } else {
      phase.recv(root, message.data(), message.size());
    }
    phase.wait();
  }
  if (me != root) {
    acceptExact(context, message, dtype, root, MessageKind::Broadcast, count, root);
  }
  throwIfUsageError(context);
  context.executor->copy(recv, me == root ? send : message.data() + kExactHeaderBytes, bytes);
}

}  // namespace qccl::coll
