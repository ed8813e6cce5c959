// Compressed allreduce as an allgather (docs/ALGORITHMS.md): every rank encodes its whole vector
// once (worker error feedback) and sends the bytes to everyone; every rank then decodes the n
// chunks, its own too, and adds them in fp32 in rank order, so all outputs are bitwise identical
// and nothing is encoded twice. It sends (n - 1) chunks of the whole vector where sra sends
// 2 (n - 1) / n, so it pays by wire bytes only at two ranks; what it saves is the owner's second
// encode, which for a sparse codec would cut the denser sum back to D (the plan picks it for
// topk codecs when it sends no more than sra). Pipelined by segment: segment k is reduced and
// written as soon as every rank's segment k is in.
#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/pipeline.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void allreduceGather(Context& context, const ReduceArgs& a) {
  if (!agreeOnAllreduce(context, {MessageKind::GatherAllreduceCall, a.dtype, a.op, a.count}))
    return;
  const int n = context.group.size(), me = context.group.me;
  const Segments segments(context, {0, a.count}, a.dtype);
  Workspace& ws = *context.workspace;
  auto chunks = [&](int p) -> Buffer& { return ws.buffer(Slot::GatherIn, size_t(p)); };
  for (int p = 0; p < n; ++p) chunks(p).resize(segments.totalBytes());
  size_t largest = 0;
  for (size_t k = 0; k < segments.size(); ++k) largest = std::max(largest, segments.span(k).size());
  float* sums = ws.floats(Slot::ScatterSums, largest);
  Executor& exec = *context.executor;
  Phase phase(context);
  std::vector<std::vector<Phase::Handle>> inbox{size_t(n)};
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    for (size_t k = 0; k < segments.size(); ++k) {
      inbox[size_t(p)].push_back(
          phase.recv(p, chunks(p).data() + segments.offset(k), segments.bytes(k)));
    }
  }
  size_t encoded = 0, reduced = 0;
  bool ok = true;
  // Segment k once every peer's is in (the own one is encoded before any output is written, so
  // an in-place call reads its input first).
  auto reduceNext = [&] {
    if (reduced == encoded) return false;
    const size_t k = reduced;
    for (int p = 0; p < n; ++p) {
      if (p != me && !phase.done(inbox[size_t(p)][k])) return false;
    }
    const Span s = segments.span(k);
    for (int p = 0; p < n; ++p) {
      const uint8_t* chunk = chunks(p).data() + segments.offset(k);
      ok = ok && context.usageError.empty() &&
           (p == me || acceptChunk(context, chunk, segments.bytes(k), s.size(), p));
      if (ok)
        decodeChunk(context, chunk, segments.bytes(k), s.size(), a.dtype, qcclFloat32, sums, p > 0);
    }
    if (ok) {
      if (a.op == qcclAvg) exec.divide(sums, s.size(), float(n));
      exec.fromFloat32(sums, s.size(), a.dtype,
                       static_cast<uint8_t*>(a.recv) + s.begin * dataTypeSize(a.dtype));
    }
    ++reduced;
    return true;
  };
  auto step = [&] {
    bool progressed = phase.poll();
    while (reduceNext()) progressed = true;
    return progressed;
  };
  const auto* send = static_cast<const uint8_t*>(a.send);
  for (; encoded < segments.size(); ++encoded) {
    const Span s = segments.span(encoded);
    uint8_t* mine = chunks(me).data() + segments.offset(encoded);
    encodeChunk(context, send + s.begin * dataTypeSize(a.dtype), s.size(), a.dtype,
                {Residuals::kWorker, a.count, s.begin}, s.begin, mine, segments.bytes(encoded));
    for (int p = 0; p < n; ++p) {
      if (p != me) phase.send(p, mine, segments.bytes(encoded));
    }
    step();
  }
  runUntil(
      context, step, [&] { return reduced == segments.size(); }, [&] { return phase.awaited(); });
  phase.wait();
}

}  // namespace qccl::coll
