// Exact allreduce by recursive doubling, for small calls on a power-of-two number of ranks: in
// round k every rank swaps its block's partial result with rank me ^ 2^k and combines the two,
// the lower block's first, so both hold the same bits; after log2 n rounds every rank holds
// ((x0 + x1) + (x2 + x3)) + ... The partial results travel in the dtype itself, which is why
// only dtypes that accumulate in their own type take this path (a bf16 sum is rounded once, at
// the end, which partial bf16 sums could not keep).
//
// A disagreement (a peer with another count, dtype or op, maybe on another path) shows in some
// round as a message that does not match. The rank that sees it sends poison in its later
// rounds, so every rank's partner reports it in turn: a rank that got a good partial in every
// round knows that all 2^k ranks of its block agree, round by round, so after the last round
// either every rank has found the disagreement or there is none. Peers on the one- and two-round
// and pipelined paths expect one message from every rank under this first tag and then a second
// round; a rank that found a disagreement gives them both.
#include "collectives/allreduce_impl.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/pipeline.h"
#include "collectives/reduction.h"

namespace qccl::coll {

namespace {

// After the rounds found a disagreement: poison to, and whatever comes from, every peer this rank
// was not paired with, under the same tag, then the second round.
void finishDisagreement(Context& context, Phase& phase, size_t messageBytes) {
  const int n = context.group.size(), me = context.group.me;
  Workspace& ws = *context.workspace;
  for (int p = 0; p < n; ++p) {
    if (p == me || isPowerOfTwo(p ^ me)) continue;  // p ^ me = 2^k: the partner of round k
    Buffer& out = ws.buffer(Slot::ExactOut, size_t(p));
    out.resize(messageBytes);
    writePoison(out.data(), out.size(), context.globalRank());
    Buffer& in = ws.buffer(Slot::ExactIn, size_t(p));
    in.resize(messageBytes);
    phase.recv(p, in.data(), in.size());
    phase.send(p, out.data(), out.size());
  }
  phase.wait();
  poisonSecondRound(context, messageBytes);
}

}  // namespace

void allreduceExactDoubling(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = a.count * dataTypeSize(a.dtype), messageBytes = kExactHeaderBytes + bytes;
  Workspace& ws = *context.workspace;
  // What goes to peer p, in a buffer of its own (the sends of earlier rounds may still be on
  // their way): this rank's block's partial result (round 0: its input), or poison once a
  // disagreement is known.
  auto out = [&](int p) -> Buffer& {
    Buffer& message = ws.buffer(Slot::ExactOut, size_t(p));
    message.resize(messageBytes);
    writeExactHeader(message.data(), a.dtype, a.op, MessageKind::ExactPartial, a.count);
    return message;
  };
  context.executor->copy(out(me ^ 1).data() + kExactHeaderBytes, a.send, bytes);
  Phase phase(context);
  for (int bit = 1; bit < n; bit <<= 1) {
    const int partner = me ^ bit;
    Buffer& message = ws.buffer(Slot::ExactOut, size_t(partner));
    if (!context.usageError.empty()) {
      message.resize(messageBytes);
      writePoison(message.data(), message.size(), context.globalRank());
    }
    Buffer& in = ws.buffer(Slot::ExactIn, size_t(partner));
    in.resize(messageBytes);
    const Phase::Handle received = phase.recv(partner, in.data(), in.size());
    phase.send(partner, message.data(), message.size());
    runUntil(
        context, [&] { return phase.poll(); }, [&] { return phase.done(received); },
        [&] { return phase.awaited(); });
    if (!context.usageError.empty() ||
        !acceptExact(context, in, a.dtype, a.op, MessageKind::ExactPartial, a.count, partner)) {
      continue;
    }
    const uint8_t* mine = message.data() + kExactHeaderBytes;
    const uint8_t* theirs = in.data() + kExactHeaderBytes;
    Accumulator acc(a.dtype, a.op, a.count, ws.buffer(Slot::ExactSums, 0));
    acc.add(me < partner ? mine : theirs);
    acc.add(me < partner ? theirs : mine);
    if (bit << 1 < n) {
      // The partial as it is for the next round's partner (Avg: divided by 1).
      acc.finish(1, out(me ^ (bit << 1)).data() + kExactHeaderBytes);
    } else {
      acc.finish(n, a.recv);  // the last round: the result (Avg divides here)
    }
  }
  if (!context.usageError.empty()) {
    finishDisagreement(context, phase, messageBytes);
    return;  // the caller reports it; the output stays untouched
  }
  phase.wait();
}

}  // namespace qccl::coll
