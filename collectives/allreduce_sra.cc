// Compressed allreduce, scatter-reduce-allgather (docs/ALGORITHMS.md): chunk j of every rank's
// vector is encoded (worker error feedback) and sent to rank j, which adds the n contributions in
// fp32 in rank order (its own in full precision), applies Avg, encodes the result once (server
// error feedback) and sends it to everyone; every rank, the owner too, decodes the same bytes, so
// all outputs are bitwise identical.
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

  // Phase 1: encode chunk p for rank p; receive this rank's chunk from everyone.
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(n)), in(static_cast<size_t>(n));
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      const Span s = spans[size_t(p)];
      encodeChunk(context, send + s.begin * width, s.size(), a.dtype,
                  {Residuals::kWorker, a.count, s.begin}, s.begin, out[size_t(p)]);
      in[size_t(p)].assign(chunkBytes(context, mine.size(), a.dtype), 0);
      phase.recv(p, in[size_t(p)].data(), in[size_t(p)].size());
      phase.send(p, out[size_t(p)].data(), out[size_t(p)].size());
    }
    phase.wait();
  }

  // Reduce in rank order, in fp32.
  std::vector<float> acc(mine.size(), 0.0f), own(mine.size());
  bool ok = context.usageError.empty();
  for (int p = 0; p < n; ++p) {
    if (p == me) {
      toFloat32(send + mine.begin * width, a.dtype, mine.size(), own.data());
      for (size_t i = 0; i < own.size(); ++i) acc[i] += own[i];
    } else if (acceptChunk(context, in[size_t(p)], mine.size(), p)) {
      decodeChunk(context, in[size_t(p)], mine.size(), qcclFloat32, acc.data(), true);
    } else {
      ok = false;
    }
  }
  if (a.op == qcclAvg) {
    for (float& v : acc) v /= float(n);
  }
  std::vector<uint8_t> result;
  if (ok) {
    encodeChunk(context, acc.data(), mine.size(), qcclFloat32, {Residuals::kServer, mine.size(), 0},
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
      in[size_t(p)].assign(chunkBytes(context, spans[size_t(p)].size(), qcclFloat32), 0);
      phase.recv(p, in[size_t(p)].data(), in[size_t(p)].size());
      phase.send(p, result.data(), result.size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p != me) acceptChunk(context, in[size_t(p)], spans[size_t(p)].size(), p);
  }
  if (!context.usageError.empty()) return;  // before the output is touched: it may be the input
  // Decode every chunk, this rank's own from the bytes it sent, into the output.
  auto* recv = static_cast<uint8_t*>(a.recv);
  for (int p = 0; p < n; ++p) {
    const Span s = spans[size_t(p)];
    decodeChunk(context, p == me ? result : in[size_t(p)], s.size(), a.dtype,
                recv + s.begin * width, false);
  }
}

}  // namespace qccl::coll
