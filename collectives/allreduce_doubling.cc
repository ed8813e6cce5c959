// Exact allreduce on a power-of-two number of ranks by recursive doubling (small calls) and by
// recursive halving then doubling (somewhat larger ones). In round k every rank swaps data with
// rank me ^ 2^k and combines the two, the lower rank's first, so every element is summed in the
// same tree, ((x0 + x1) + (x2 + x3)) + ..., by either algorithm:
// - doubling: the whole partial result each round; after log2 n rounds every rank holds the sum.
// - halving, then doubling: each round the pair splits its span, each keeps one half and gets
//   the partner's partial of it; after log2 n rounds each rank holds the sum over 1/n of the
//   vector, and log2 n rounds back, each sending what it holds, gather it everywhere. Half the
//   bytes of the doubling for twice its messages.
// The partial results travel in the dtype itself, which is why only dtypes that accumulate in
// their own type take these paths (a bf16 sum is rounded once, at the end).
//
// A disagreement (a peer with another count, dtype or op, maybe on another path) shows in some
// round as a message that does not match. The rank that sees it sends poison in its later
// rounds, so every rank's partner reports it in turn: a rank that got a good partial in rounds
// 0..k knows that all 2^(k+1) ranks of its block made its call, so after log2 n rounds either
// every rank has found the disagreement or there is none (the halving's gather then runs only
// when there is none). Peers on the one- and two-round and pipelined paths expect one message
// from every rank under this first tag and then a second round; a rank that found a
// disagreement gives them both.
#include "collectives/allreduce_impl.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

namespace {

// The message to partner p: `elements` values from `data` behind a header, or poison of the same
// size once a disagreement is known. A buffer per peer: earlier sends may still be on their way.
const Buffer& frameFor(Context& context, int p, const ReduceArgs& a, MessageKind kind,
                       const uint8_t* data, size_t elements) {
  Buffer& message = context.workspace->buffer(Slot::ExactOut, size_t(p));
  const size_t bytes = elements * dataTypeSize(a.dtype);
  message.resize(kExactHeaderBytes + bytes);
  if (!context.usageError.empty()) {
    writePoison(message.data(), message.size(), context.globalRank());
  } else {
    writeExactHeader(message.data(), a.dtype, a.op, kind, a.count);
    context.executor->copy(message.data() + kExactHeaderBytes, data, bytes);
  }
  return message;
}

// Sends `message` to `partner` and waits for its message of `elements` values; returns their
// values, or null when it was not a partial of the same call (the disagreement is recorded).
const uint8_t* swapWith(Context& context, Phase& phase, int partner, const Buffer& message,
                        const ReduceArgs& a, MessageKind kind, size_t elements) {
  Buffer& in = context.workspace->buffer(Slot::ExactIn, size_t(partner));
  in.resize(kExactHeaderBytes + elements * dataTypeSize(a.dtype));
  const Phase::Handle received = phase.recv(partner, in.data(), in.size());
  phase.send(partner, message.data(), message.size());
  phase.wait(received);
  if (!context.usageError.empty() ||
      !acceptExact(context, in, a.dtype, a.op, kind, a.count, partner))
    return nullptr;
  return in.data() + kExactHeaderBytes;
}

// out = lower ⊕ upper over `elements` values, the lower rank's partial first; `contributors`:
// n for the final result (Avg divides), 1 for a partial (kept as it is).
void combine(Context& context, const ReduceArgs& a, bool mineIsLower, const uint8_t* mine,
             const uint8_t* theirs, size_t elements, int contributors, uint8_t* out) {
  Accumulator acc(a.dtype, a.op, elements, context.workspace->buffer(Slot::ExactSums, 0));
  acc.add(mineIsLower ? mine : theirs);
  acc.add(mineIsLower ? theirs : mine);
  acc.finish(contributors, out);
}

// The half of `whole` that is not `half` (the partner's in a halving round).
Span otherHalf(Span whole, Span half) {
  return half.begin == whole.begin ? Span{half.end, whole.end} : Span{whole.begin, half.begin};
}

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
  Buffer& partial = context.workspace->buffer(Slot::ExactPartial, 0);
  partial.resize(a.count * dataTypeSize(a.dtype));
  const auto* mine = static_cast<const uint8_t*>(a.send);  // this rank's block's partial result
  Phase phase(context);
  for (int bit = 1; bit < n; bit <<= 1) {
    const int partner = me ^ bit;
    const Buffer& message = frameFor(context, partner, a, MessageKind::ExactPartial, mine, a.count);
    const uint8_t* theirs =
        swapWith(context, phase, partner, message, a, MessageKind::ExactPartial, a.count);
    if (theirs == nullptr) continue;
    const bool last = bit << 1 >= n;
    combine(context, a, me < partner, mine, theirs, a.count, last ? n : 1,
            last ? static_cast<uint8_t*>(a.recv) : partial.data());
    mine = partial.data();
  }
  if (!context.usageError.empty()) {
    finishDisagreement(context, phase, kExactHeaderBytes + a.count * dataTypeSize(a.dtype));
    return;  // the caller reports it; the output stays untouched
  }
  phase.wait();
}

std::vector<Span> halvingSpans(size_t count, int n, int me) {
  std::vector<Span> held{{0, count}};
  for (int bit = 1; bit < n; bit <<= 1) {
    const Span whole = held.back();
    const size_t middle = whole.begin + whole.size() / 2;
    held.push_back((me & bit) == 0 ? Span{whole.begin, middle} : Span{middle, whole.end});
  }
  return held;
}

void allreduceExactHalving(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  const size_t width = dataTypeSize(a.dtype);
  Buffer& partial = context.workspace->buffer(Slot::ExactPartial, 0);
  partial.resize(a.count * width);
  auto* out = static_cast<uint8_t*>(a.recv);
  const auto* mine = static_cast<const uint8_t*>(a.send);  // laid out as the whole vector
  const std::vector<Span> held = halvingSpans(a.count, n, me);
  Phase phase(context);
  for (int round = 0; (1 << round) < n; ++round) {
    const int bit = 1 << round, partner = me ^ bit;
    const Span whole = held[size_t(round)], keep = held[size_t(round) + 1];
    const Span give = otherHalf(whole, keep);
    const bool lower = (me & bit) == 0;
    const Buffer& message = frameFor(context, partner, a, MessageKind::ExactHalf,
                                     mine + give.begin * width, give.size());
    const uint8_t* theirs =
        swapWith(context, phase, partner, message, a, MessageKind::ExactHalf, keep.size());
    if (theirs == nullptr) continue;
    const bool last = bit << 1 >= n;
    combine(context, a, lower, mine + keep.begin * width, theirs, keep.size(), last ? n : 1,
            (last ? out : partial.data()) + keep.begin * width);
    mine = partial.data();
  }
  if (!context.usageError.empty()) {
    finishDisagreement(context, phase, kExactHeaderBytes);
    return;  // the caller reports it; the output stays untouched
  }
  // Every rank made the same call: the gather needs no headers, and each round's values go
  // straight from and into the output.
  for (int round = int(held.size()) - 2; round >= 0; --round) {
    const int partner = me ^ (1 << round);
    const Span have = held[size_t(round) + 1], theirs = otherHalf(held[size_t(round)], have);
    const Phase::Handle received =
        phase.recv(partner, out + theirs.begin * width, theirs.size() * width);
    phase.send(partner, out + have.begin * width, have.size() * width);
    phase.wait(received);
  }
  phase.wait();
}

}  // namespace qccl::coll
