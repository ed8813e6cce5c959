// Compressed allreduce, scatter-reduce-allgather (docs/ALGORITHMS.md): chunk j of every rank's
// vector is encoded (worker error feedback) and sent to rank j, which adds the n contributions in
// fp32 in rank order (its own in full precision), applies Avg, encodes the result once (server
// error feedback) and sends it to everyone; every rank, the owner too, decodes the same bytes, so
// all outputs are bitwise identical.
#include <algorithm>
#include <cstring>

#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/messages.h"
#include "collectives/partition.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void allreduceSra(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  const std::vector<Span> spans = partition(a.count, n, chunkUnit(context));
  const Span mine = spans[size_t(me)];
  const size_t width = dataTypeSize(a.dtype);
  const auto* send = static_cast<const uint8_t*>(a.send);
  Workspace& ws = *context.workspace;
  auto out = [&](int p) -> Buffer& { return ws.buffer("sra.out", size_t(p)); };
  auto in = [&](int p) -> Buffer& { return ws.buffer("sra.in", size_t(p)); };

  // Phase 1: encode chunk p for rank p; receive this rank's chunk from everyone.
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      const Span s = spans[size_t(p)];
      encodeChunk(context, send + s.begin * width, s.size(), a.dtype,
                  {Residuals::kWorker, a.count, s.begin}, s.begin, out(p));
      in(p).resize(chunkBytes(context, mine.size(), a.dtype));
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, out(p).data(), out(p).size());
    }
    phase.wait();
  }

  // Reduce in rank order, in fp32.
  float* acc = ws.floats("sra.acc", mine.size());
  float* own = ws.floats("sra.own", mine.size());
  std::fill(acc, acc + mine.size(), 0.0f);
  bool ok = context.usageError.empty();
  for (int p = 0; p < n; ++p) {
    if (p == me) {
      toFloat32(send + mine.begin * width, a.dtype, mine.size(), own);
      for (size_t i = 0; i < mine.size(); ++i) acc[i] += own[i];
    } else if (acceptChunk(context, in(p), mine.size(), p)) {
      decodeChunk(context, in(p), mine.size(), qcclFloat32, acc, true);
    } else {
      ok = false;
    }
  }
  if (a.op == qcclAvg) {
    for (size_t i = 0; i < mine.size(); ++i) acc[i] /= float(n);
  }
  Buffer& result = ws.buffer("sra.result", 0);
  if (ok) {
    encodeChunk(context, acc, mine.size(), qcclFloat32, {Residuals::kServer, mine.size(), 0},
                mine.begin, result);
  } else {
    result.resize(chunkBytes(context, mine.size(), qcclFloat32));
    writePoison(result.data(), result.size(), context.globalRank());
  }

  // Phase 2: every reduced chunk to everyone.
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      in(p).resize(chunkBytes(context, spans[size_t(p)].size(), qcclFloat32));
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, result.data(), result.size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p != me) acceptChunk(context, in(p), spans[size_t(p)].size(), p);
  }
  if (!context.usageError.empty()) return;  // before the output is touched: it may be the input
  // Decode every chunk, this rank's own from the bytes it sent, into the output.
  auto* recv = static_cast<uint8_t*>(a.recv);
  for (int p = 0; p < n; ++p) {
    const Span s = spans[size_t(p)];
    decodeChunk(context, p == me ? result : in(p), s.size(), a.dtype, recv + s.begin * width,
                false);
  }
}

}  // namespace qccl::coll
