// Reduce-scatter (docs/ALGORITHMS.md): share p of every rank's vector goes to rank p, which
// reduces the n shares in rank order. Compressed: encoded with worker error feedback, added in
// fp32 (its own share in full precision), Avg applied, written in the caller's dtype. Exact:
// framed raw values, reduced like the exact allreduce.
#include <algorithm>
#include <cstring>

#include "collectives/chunk_codec.h"
#include "collectives/collectives.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

namespace {
constexpr uint8_t kKindShare = 5;
}

void reduceScatter(Context& context, const ReduceArgs& a, bool compressed) {
  const int n = context.group.size(), me = context.group.me;
  const size_t width = dataTypeSize(a.dtype), share = a.count;
  const auto* send = static_cast<const uint8_t*>(a.send);
  if (n == 1) {
    if (a.recv != a.send) std::memcpy(a.recv, a.send, share * width);
    return;
  }
  const size_t inBytes =
      compressed ? chunkBytes(context, share, a.dtype) : kExactHeaderBytes + share * width;
  Workspace& ws = *context.workspace;
  auto out = [&](int p) -> Buffer& { return ws.buffer("rs.out", size_t(p)); };
  auto in = [&](int p) -> Buffer& { return ws.buffer("rs.in", size_t(p)); };
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      const uint8_t* data = send + size_t(p) * share * width;
      if (compressed) {
        encodeChunk(context, data, share, a.dtype,
                    {Residuals::kWorker, share * size_t(n), p * share}, p * share, out(p));
      } else {
        out(p).resize(kExactHeaderBytes + share * width);
        writeExactHeader(out(p).data(), a.dtype, a.op, kKindShare, share);
        std::memcpy(out(p).data() + kExactHeaderBytes, data, share * width);
      }
      in(p).resize(inBytes);
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, out(p).data(), out(p).size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    if (compressed) {
      acceptChunk(context, in(p), share, p);
    } else {
      acceptExact(context, in(p), a.dtype, a.op, kKindShare, share, p);
    }
  }
  throwIfUsageError(context);  // every rank heard from every other: no second phase to warn them
  const uint8_t* own = send + size_t(me) * share * width;
  if (compressed) {
    float* acc = ws.floats("rs.acc", share);
    float* values = ws.floats("rs.values", share);
    std::fill(acc, acc + share, 0.0f);
    for (int p = 0; p < n; ++p) {
      if (p == me) {
        toFloat32(own, a.dtype, share, values);
        for (size_t i = 0; i < share; ++i) acc[i] += values[i];
      } else {
        decodeChunk(context, in(p), share, qcclFloat32, acc, true);
      }
    }
    if (a.op == qcclAvg) {
      for (size_t i = 0; i < share; ++i) acc[i] /= float(n);
    }
    fromFloat32(acc, share, a.dtype, a.recv);
  } else {
    Accumulator acc(a.dtype, a.op, share);
    for (int p = 0; p < n; ++p) acc.add(p == me ? own : in(p).data() + kExactHeaderBytes);
    acc.finish(n, a.recv);
  }
}

}  // namespace qccl::coll
