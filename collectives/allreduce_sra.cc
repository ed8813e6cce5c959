// Compressed allreduce, scatter-reduce-allgather (docs/ALGORITHMS.md): chunk j of every rank's
// vector is encoded (worker error feedback) and sent to rank j, which adds the n contributions in
// fp32 in rank order (its own in full precision), applies Avg, encodes the result once (server
// error feedback) and sends it to everyone; every rank, the owner too, decodes the same bytes, so
// all outputs are bitwise identical. Both stages are pipelined by segment and run at once: a
// segment's result goes out as soon as it is reduced, while later segments are still arriving.
#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/gather_segments.h"
#include "collectives/messages.h"
#include "collectives/scatter_reduce.h"

namespace qccl::coll {

void allreduceSra(Context& context, const ReduceArgs& a) {
  // Agreement first: in-place, the output is the input, and it is written segment by segment.
  if (!agreeOnAllreduce(context, {MessageKind::SraCall, a.dtype, a.op, a.count})) return;
  const std::vector<Span> spans = partition(a.count, context.group.size(), chunkUnit(context));
  const Span mine = spans[size_t(context.group.me)];
  ScatterReduce scatter(context, a, spans);
  GatherSegments gather(context, spans, qcclFloat32, a.recv, a.dtype);

  auto step = [&] {
    bool progressed = scatter.poll();
    progressed = gather.poll() || progressed;
    ScatterReduce::Reduced r;
    while (scatter.reduceNext(r)) {
      uint8_t* out = gather.ownSegment(r.index);
      const size_t bytes = gather.own().bytes(r.index);
      if (r.ok) {
        encodeChunk(context, r.values, r.span.size(), qcclFloat32,
                    {Residuals::kServer, mine.size(), r.span.begin - mine.begin}, r.span.begin, out,
                    bytes);
      } else {
        writePoison(out, bytes, context.globalRank());
      }
      gather.share(r.index);
      if (r.ok) gather.decodeOwn(r.index);
      progressed = true;
    }
    return gather.decodeArrived() || progressed;
  };
  while (scatter.sendNext()) step();
  runUntil(
      context, step, [&] { return scatter.reducedAll() && gather.decodedAll(); },
      [&] { return scatter.awaited() + " " + gather.awaited(); });
  scatter.wait();
  gather.wait();
}

}  // namespace qccl::coll
