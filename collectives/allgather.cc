// Allgather (docs/ALGORITHMS.md). Compressed: each rank encodes its shard once (worker error
// feedback) and sends the bytes to everyone; every rank decodes every shard, its own too, so the
// replicas are identical (or keeps its own exact with QCCL_CALL_KEEP_OWN_SHARD). Exact: framed
// raw values.
#include <cstring>

#include "collectives/chunk_codec.h"
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

namespace {
constexpr uint8_t kKindShard = 6;
}

void allgather(Context& context, const void* send, void* recv, size_t sendCount,
               qcclDataType_t dtype, bool compressed, bool keepOwnShardExact) {
  const int n = context.group.size(), me = context.group.me;
  const size_t width = dataTypeSize(dtype), shardBytes = sendCount * width;
  Workspace& ws = *context.workspace;
  Buffer& mine = ws.buffer("ag.mine", 0);
  if (compressed) {
    encodeChunk(context, send, sendCount, dtype, {Residuals::kWorker, sendCount, 0}, 0, mine);
  } else {
    mine.resize(kExactHeaderBytes + shardBytes);
    writeExactHeader(mine.data(), dtype, 0, kKindShard, sendCount);
    std::memcpy(mine.data() + kExactHeaderBytes, send, shardBytes);
  }
  auto in = [&](int p) -> Buffer& { return ws.buffer("ag.in", size_t(p)); };
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      in(p).resize(mine.size());
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, mine.data(), mine.size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    if (compressed) {
      acceptChunk(context, in(p), sendCount, p);
    } else {
      acceptExact(context, in(p), dtype, 0, kKindShard, sendCount, p);
    }
  }
  throwIfUsageError(context);
  auto* out = static_cast<uint8_t*>(recv);
  // The own shard last: with an in-place call it is the input of the encode above.
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    if (compressed) {
      decodeChunk(context, in(p), sendCount, dtype, out + size_t(p) * shardBytes, false);
    } else {
      std::memcpy(out + size_t(p) * shardBytes, in(p).data() + kExactHeaderBytes, shardBytes);
    }
  }
  uint8_t* own = out + size_t(me) * shardBytes;
  if (compressed && !keepOwnShardExact) {
    decodeChunk(context, mine, sendCount, dtype, own, false);
  } else if (own != send) {
    std::memmove(own, send, shardBytes);
  }
}

}  // namespace qccl::coll
