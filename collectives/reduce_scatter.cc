// Reduce-scatter (docs/ALGORITHMS.md): share p of every rank's vector goes to rank p, which
// reduces the n shares in rank order. Compressed: encoded with worker error feedback, added in
// fp32 (its own share in full precision), Avg applied, written in the caller's dtype. Exact:
// framed raw values, reduced like the exact allreduce, or pipelined like it for large shares.
#include <algorithm>
#include <cstring>

#include "collectives/call_agreement.h"
#include "collectives/collectives.h"
#include "collectives/exact_pipeline.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"
#include "collectives/scatter_reduce.h"

namespace qccl::coll {

namespace {

void reduceScatterExactPipelined(Context& context, const ReduceArgs& a, size_t step) {
  const int n = context.group.size();
  if (!agreeOnCall(context, {MessageKind::ExactReduceScatterCall, a.dtype, a.op, a.count, true}))
    throwIfUsageError(context);
  const std::vector<Span> spans = equalSpans(a.count, n);
  ExactScatterReduce scatter(context, {a.send, a.recv, a.count * size_t(n), a.dtype, a.op}, spans,
                             step, a.recv, spans[size_t(context.group.me)].begin);
  scatter.sendAll();
  auto progress = [&] {
    bool progressed = scatter.poll();
    for (size_t k = 0; scatter.reduceNext(k);) progressed = true;
    return progressed;
  };
  runUntil(
      context, progress, [&] { return scatter.reducedAll(); }, [&] { return scatter.awaited(); });
  scatter.wait();
}

// The exact path: framed raw shares, reduced like the exact allreduce; large shares pipelined.
void reduceScatterExact(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  const size_t width = dataTypeSize(a.dtype), share = a.count, shareBytes = share * width;
  if (const size_t step = exactSegmentStep(share, width, context.segmentElements)) {
    reduceScatterExactPipelined(context, a, step);
    return;
  }
  const auto* send = static_cast<const uint8_t*>(a.send);
  Workspace& ws = *context.workspace;
  auto out = [&](int p) -> Buffer& { return ws.buffer(Slot::ReduceScatterOut, size_t(p)); };
  auto in = [&](int p) -> Buffer& { return ws.buffer(Slot::ReduceScatterIn, size_t(p)); };
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      out(p).resize(kExactHeaderBytes + shareBytes);
      writeExactHeader(out(p).data(), a.dtype, a.op, MessageKind::ExactShare, share);
      context.executor->copy(out(p).data() + kExactHeaderBytes, send + size_t(p) * shareBytes,
                             shareBytes);
      in(p).resize(kExactHeaderBytes + shareBytes);
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, out(p).data(), out(p).size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p != me) acceptExact(context, in(p), a.dtype, a.op, MessageKind::ExactShare, share, p);
  }
  throwIfUsageError(context);  // every rank heard from every other: no second phase to warn them
  Accumulator acc(a.dtype, a.op, share, ws.buffer(Slot::ExactSums, 0));
  for (int p = 0; p < n; ++p) {
    acc.add(p == me ? send + size_t(me) * shareBytes : in(p).data() + kExactHeaderBytes);
  }
  acc.finish(n, a.recv);
}

// The compressed path: the pipelined scatter-reduce stage, each reduced segment written out in
// the caller's dtype as soon as it is complete.
void reduceScatterCompressed(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  if (!agreeOnCall(context, {MessageKind::ReduceScatterCall, a.dtype, a.op, a.count}))
    throwIfUsageError(context);
  const std::vector<Span> spans = equalSpans(a.count, n);
  ScatterReduce scatter(context, {a.send, a.recv, a.count * size_t(n), a.dtype, a.op}, spans);
  auto* recv = static_cast<uint8_t*>(a.recv);
  const size_t width = dataTypeSize(a.dtype), first = spans[size_t(me)].begin;
  auto step = [&] {
    bool progressed = scatter.poll();
    ScatterReduce::Reduced r;
    while (scatter.reduceNext(r)) {
      if (r.ok) {
        context.executor->fromFloat32(r.values, r.span.size(), a.dtype,
                                      recv + (r.span.begin - first) * width);
      }
      progressed = true;
    }
    return progressed;
  };
  while (scatter.sendNext()) step();
  runUntil(
      context, step, [&] { return scatter.reducedAll(); }, [&] { return scatter.awaited(); });
  scatter.wait();
  throwIfUsageError(context);
}

}  // namespace

void reduceScatter(Context& context, const ReduceArgs& a, bool compressed) {
  if (context.group.size() == 1 && !compressed) {
    context.executor->copy(a.recv, a.send, a.count * dataTypeSize(a.dtype));
    return;
  }
  if (compressed) {
    reduceScatterCompressed(context, a);
  } else {
    reduceScatterExact(context, a);
  }
}

}  // namespace qccl::coll
