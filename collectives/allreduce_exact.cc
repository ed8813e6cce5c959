// Exact allreduce, scatter-reduce-allgather: rank j reduces chunk j of every contribution in rank
// order (integers in their type, floats in fp32 or fp64) and sends the result to everyone, so all
// ranks hold the same bits. Messages carry a 16-byte header that the receiver checks. Small calls
// take one round instead: every rank sends its whole vector to everyone and reduces all of them
// in rank order, which are the same sums; on a power-of-two number of ranks they go by recursive
// doubling (allreduce_doubling.cc), which adds in a tree order instead. Large calls are pipelined
// (exact_pipeline.h): the same sums again, segment by segment, after the ranks agreed on the call.
#include "collectives/allreduce_impl.h"
#include "collectives/call_agreement.h"
#include "collectives/exact_pipeline.h"
#include "collectives/messages.h"
#include "collectives/partition.h"
#include "collectives/phase.h"
#include "collectives/pipeline.h"
#include "collectives/reduction.h"

namespace qccl::coll {

namespace {

void frame(Executor& exec, Buffer& m, qcclDataType_t dtype, int op, MessageKind kind,
           const void* data, size_t count) {
  const size_t bytes = count * dataTypeSize(dtype);
  m.resize(kExactHeaderBytes + bytes);
  writeExactHeader(m.data(), dtype, op, kind, count);
  exec.copy(m.data() + kExactHeaderBytes, data, bytes);
}
// One round with every peer: `message` to each, and from each a message of `inBytes` into its
// ExactIn buffer.
void roundWithAll(Context& context, const Buffer& message, size_t inBytes) {
  Phase phase(context);
  for (int p = 0; p < context.group.size(); ++p) {
    if (p == context.group.me) continue;
    Buffer& in = context.workspace->buffer(Slot::ExactIn, size_t(p));
    in.resize(inBytes);
    phase.recv(p, in.data(), in.size());
    phase.send(p, message.data(), message.size());
  }
  phase.wait();
}

}  // namespace

void poisonSecondRound(Context& context, size_t inBytes) {
  Buffer& poison = context.workspace->buffer(Slot::ExactResult, 0);
  poison.resize(kExactHeaderBytes);
  writePoison(poison.data(), poison.size(), context.globalRank());
  roundWithAll(context, poison, inBytes);
}

bool agreeOnAllreduce(Context& context, const CallShape& call) {
  if (agreeOnCall(context, call)) return true;
  poisonSecondRound(context, kExactHeaderBytes);
  return false;
}

namespace {

// A rank that found a disagreement in the one round cannot know which path its peers took: it
// runs the second round as the two-round path does after a disagreement. Every rank finds the
// disagreement (each hears from every other), so all of them run that round or none.
void allreduceExactOneRound(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  const size_t messageBytes = kExactHeaderBytes + a.count * dataTypeSize(a.dtype);
  Workspace& ws = *context.workspace;
  Buffer& mine = ws.buffer(Slot::ExactOut, 0);
  frame(*context.executor, mine, a.dtype, a.op, MessageKind::ExactVector, a.send, a.count);
  roundWithAll(context, mine, messageBytes);
  // A message that is refused records the disagreement in the context (acceptExact).
  Accumulator acc(a.dtype, a.op, a.count, ws.buffer(Slot::ExactSums, 0));
  for (int p = 0; p < n && context.usageError.empty(); ++p) {
    Buffer& in = ws.buffer(Slot::ExactIn, size_t(p));
    if (p == me) {
      acc.add(a.send);
    } else if (acceptExact(context, in, a.dtype, a.op, MessageKind::ExactVector, a.count, p)) {
      acc.add(in.data() + kExactHeaderBytes);
    }
  }
  if (!context.usageError.empty()) {
    poisonSecondRound(context, messageBytes);
    return;  // the caller reports it; the output stays untouched
  }
  acc.finish(n, a.recv);
}

// Both stages at once: each reduced segment goes to everyone while later ones are still coming.
void allreduceExactPipelined(Context& context, const ReduceArgs& a, const std::vector<Span>& spans,
                             size_t step) {
  if (!agreeOnAllreduce(context, {MessageKind::ExactAllreduceCall, a.dtype, a.op, a.count, true}))
    return;
  ExactScatterReduce scatter(context, a, spans, step, a.recv, 0);
  ExactGather gather(context, spans, step, a.dtype, a.recv);
  scatter.sendAll();
  auto* recv = static_cast<uint8_t*>(a.recv);
  const size_t width = dataTypeSize(a.dtype);
  auto progress = [&] {
    bool progressed = scatter.poll();
    progressed = gather.poll() || progressed;
    for (size_t k = 0; scatter.reduceNext(k); progressed = true) {
      gather.share(k, recv + scatter.mine()[k].begin * width);
    }
    return progressed;
  };
  runUntil(
      context, progress, [&] { return scatter.reducedAll(); },
      [&] { return scatter.awaited() + " " + gather.awaited(); });
  scatter.wait();
  gather.wait();
}

}  // namespace

void allreduceExact(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  if (exactAllreduceByDoubling(a.count, a.dtype, n)) {
    allreduceExactDoubling(context, a);
    return;
  }
  if (exactAllreduceByHalving(a.count, a.dtype, n)) {
    allreduceExactHalving(context, a);
    return;
  }
  if (exactAllreduceInOneRound(a.count * dataTypeSize(a.dtype), n)) {
    allreduceExactOneRound(context, a);
    return;
  }
  const size_t width = dataTypeSize(a.dtype);
  const std::vector<Span> spans = partition(a.count, n, 1);
  if (const size_t step = exactSegmentStep(spans[0].size(), width, context.segmentElements)) {
    allreduceExactPipelined(context, a, spans, step);
    return;
  }
  const Span mine = spans[size_t(me)];
  const auto* send = static_cast<const uint8_t*>(a.send);
  Workspace& ws = *context.workspace;
  auto out = [&](int p) -> Buffer& { return ws.buffer(Slot::ExactOut, size_t(p)); };
  auto in = [&](int p) -> Buffer& { return ws.buffer(Slot::ExactIn, size_t(p)); };

  // Phase 1: chunk p of this rank's vector to rank p.
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      frame(*context.executor, out(p), a.dtype, a.op, MessageKind::ExactContribution,
            send + spans[size_t(p)].begin * width, spans[size_t(p)].size());
      in(p).resize(kExactHeaderBytes + mine.size() * width);
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, out(p).data(), out(p).size());
    }
    phase.wait();
  }
  Accumulator acc(a.dtype, a.op, mine.size(), ws.buffer(Slot::ExactSums, 0));
  bool ok = context.usageError.empty();
  for (int p = 0; p < n; ++p) {
    if (p == me) {
      acc.add(send + mine.begin * width);
    } else if (acceptExact(context, in(p), a.dtype, a.op, MessageKind::ExactContribution,
                           mine.size(), p)) {
      acc.add(in(p).data() + kExactHeaderBytes);
    } else {
      ok = false;
    }
  }
  Buffer& result = ws.buffer(Slot::ExactResult, 0);
  result.resize(kExactHeaderBytes + mine.size() * width);
  if (ok) {
    writeExactHeader(result.data(), a.dtype, a.op, MessageKind::ExactResult, mine.size());
    acc.finish(n, result.data() + kExactHeaderBytes);
  } else {
    writePoison(result.data(), result.size(), context.globalRank());
  }

  // Phase 2: every reduced chunk to everyone.
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      in(p).resize(kExactHeaderBytes + spans[size_t(p)].size() * width);
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, result.data(), result.size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p != me)
      acceptExact(context, in(p), a.dtype, a.op, MessageKind::ExactResult, spans[size_t(p)].size(),
                  p);
  }
  if (!context.usageError.empty()) return;  // the caller reports it; the output stays untouched
  auto* recv = static_cast<uint8_t*>(a.recv);
  for (int p = 0; p < n; ++p) {
    const uint8_t* from = (p == me ? result : in(p)).data() + kExactHeaderBytes;
    context.executor->copy(recv + spans[size_t(p)].begin * width, from,
                           spans[size_t(p)].size() * width);
  }
}

}  // namespace qccl::coll
