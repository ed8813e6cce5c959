#include "collectives/stream_schedule.h"

#include <vector>

#include "collectives/chunk_codec.h"
#include "collectives/gather_plan.h"
#include "collectives/messages.h"
#include "collectives/reduction.h"
#include "collectives/scatter_plan.h"
#include "collectives/stream_exchange.h"
#include "src/common/error.h"

namespace qccl::coll {

namespace {

// A send or receive of the open group, counted on the communicator's wire counters.
void sendCounted(Context& context, int p, const void* data, size_t bytes) {
  context.exchange->send(context.group.ranks[size_t(p)], data, bytes);
  if (context.wire) context.wire->sent += bytes;
}

void recvCounted(Context& context, int p, void* data, size_t bytes) {
  context.exchange->recv(context.group.ranks[size_t(p)], data, bytes);
  if (context.wire) context.wire->received += bytes;
}

// Every worker encode of the scatter stage, then its one group: segment k of chunk p to rank p,
// this rank's chunk from every rank.
void scatterInStreamOrder(Context& context, ScatterPlan& scatter) {
  const int n = context.group.size(), me = context.group.me;
  std::vector<EncodeTask> tasks;
  for (int p = 0; p < n; ++p) {
    for (size_t k = 0; p != me && k < scatter.chunk(p).size(); ++k) {
      tasks.push_back(scatter.encodeTask(p, k));
    }
  }
  context.executor->encode(codecCall(context), tasks.data(), tasks.size());
  StreamExchange& x = *context.exchange;
  x.groupStart();
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    for (size_t k = 0; k < scatter.chunk(p).size(); ++k) {
      sendCounted(context, p, scatter.outbox(p, k), scatter.chunk(p).bytes(k));
    }
    for (size_t k = 0; k < scatter.mine().size(); ++k) {
      recvCounted(context, p, scatter.inbox(p, k), scatter.mine().bytes(k));
    }
  }
  x.groupEnd();
}

// The owners' segments from every rank, this rank's to every rank, in one group.
void gatherInStreamOrder(Context& context, GatherPlan& gather) {
  const int n = context.group.size(), me = context.group.me;
  StreamExchange& x = *context.exchange;
  x.groupStart();
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    for (size_t k = 0; k < gather.own().size(); ++k) {
      sendCounted(context, p, gather.segment(me, k), gather.own().bytes(k));
    }
    for (size_t k = 0; k < gather.chunk(p).size(); ++k) {
      recvCounted(context, p, gather.segment(p, k), gather.chunk(p).bytes(k));
    }
  }
  x.groupEnd();
}

// Every peer's segments, then the own ones (last: in place, they are the encodes' input).
void decodeGathered(Context& context, GatherPlan& gather, bool keepOwn) {
  const int n = context.group.size(), me = context.group.me;
  for (int p = 0; p < n; ++p) {
    for (size_t k = 0; p != me && k < gather.chunk(p).size(); ++k) {
      if (context.usageError.empty()) gather.decode(p, k);
    }
  }
  for (size_t k = 0; !keepOwn && k < gather.own().size(); ++k) {
    if (context.usageError.empty()) gather.decode(me, k);
  }
}

std::vector<Span> shares(int n, size_t count) {
  std::vector<Span> spans(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p) spans[size_t(p)] = {size_t(p) * count, size_t(p + 1) * count};
  return spans;
}

}  // namespace

void allreduceStream(Context& context, const ReduceArgs& a, bool compressed) {
  if (context.group.size() == 1 && !compressed) {
    context.executor->copy(a.recv, a.send, a.count * dataTypeSize(a.dtype));
    return;
  }
  if (!compressed) {
    context.exchange->allReduce(a.send, a.recv, a.count, a.dtype, a.op);
    return;
  }
  const std::vector<Span> spans = partition(a.count, context.group.size(), chunkUnit(context));
  const Span mine = spans[size_t(context.group.me)];
  ScatterPlan scatter(context, a, spans);
  GatherPlan gather(context, spans, qcclFloat32, a.recv, a.dtype);
  scatterInStreamOrder(context, scatter);
  std::vector<EncodeTask> results;
  for (size_t k = 0; k < scatter.mine().size(); ++k) {
    const ScatterPlan::Reduced r = scatter.reduce(k);
    uint8_t* out = gather.segment(context.group.me, k);
    const size_t bytes = gather.own().bytes(k);
    if (r.ok) {
      results.push_back(encodeTask(context, r.values, r.span.size(), qcclFloat32,
                                   {Residuals::kServer, mine.size(), r.span.begin - mine.begin},
                                   r.span.begin, out, bytes));
    } else {  // only where headers are read on the host, so `out` is host memory
      writePoison(out, bytes, context.globalRank());
    }
  }
  context.executor->encode(codecCall(context), results.data(), results.size());
  gatherInStreamOrder(context, gather);
  decodeGathered(context, gather, false);
  throwIfUsageError(context);
}

void reduceScatterStream(Context& context, const ReduceArgs& a, bool compressed) {
  const int n = context.group.size();
  if (n == 1 && !compressed) {
    context.executor->copy(a.recv, a.send, a.count * dataTypeSize(a.dtype));
    return;
  }
  if (!compressed) {
    context.exchange->reduceScatter(a.send, a.recv, a.count, a.dtype, a.op);
    return;
  }
  const std::vector<Span> spans = shares(n, a.count);
  ScatterPlan scatter(context, {a.send, a.recv, a.count * size_t(n), a.dtype, a.op}, spans);
  scatterInStreamOrder(context, scatter);
  auto* recv = static_cast<uint8_t*>(a.recv);
  const size_t width = dataTypeSize(a.dtype), first = spans[size_t(context.group.me)].begin;
  for (size_t k = 0; k < scatter.mine().size(); ++k) {
    const ScatterPlan::Reduced r = scatter.reduce(k);
    if (r.ok) {
      context.executor->fromFloat32(r.values, r.span.size(), a.dtype,
                                    recv + (r.span.begin - first) * width);
    }
  }
  throwIfUsageError(context);
}

void allgatherStream(Context& context, const void* send, void* recv, size_t sendCount,
                     qcclDataType_t dtype, bool compressed, GatherMode mode) {
  if (!compressed) {
    context.exchange->allGather(send, recv, sendCount, dtype);
    return;
  }
  if (mode == GatherMode::Delta) {
    throwError(qcclInvalidUsage,
               "QCCL_CALL_DELTA runs over host transports (ucx, mpi, local); not on NCCL streams");
  }
  const bool keepOwnShardExact = mode == GatherMode::KeepOwnExact;
  const int me = context.group.me;
  const size_t width = dataTypeSize(dtype), first = size_t(me) * sendCount;
  GatherPlan gather(context, shares(context.group.size(), sendCount), dtype, recv, dtype);
  std::vector<EncodeTask> tasks;
  for (size_t k = 0; k < gather.own().size(); ++k) {
    const Span s = gather.own().span(k);
    tasks.push_back(encodeTask(context,
                               static_cast<const uint8_t*>(send) + (s.begin - first) * width,
                               s.size(), dtype, {Residuals::kWorker, sendCount, s.begin - first},
                               s.begin - first, gather.segment(me, k), gather.own().bytes(k)));
  }
  context.executor->encode(codecCall(context), tasks.data(), tasks.size());
  gatherInStreamOrder(context, gather);
  decodeGathered(context, gather, keepOwnShardExact);
  throwIfUsageError(context);
  if (keepOwnShardExact) {
    context.executor->copy(static_cast<uint8_t*>(recv) + first * width, send, sendCount * width);
  }
}

void broadcastStream(Context& context, const void* send, void* recv, size_t count,
                     qcclDataType_t dtype, int root) {
  context.exchange->broadcast(send, recv, count, dtype, context.group.ranks[size_t(root)]);
}

void alltoallStream(Context& context, const void* send, void* recv, size_t count,
                    qcclDataType_t dtype) {
  const int n = context.group.size(), me = context.group.me;
  const size_t bytes = count * dataTypeSize(dtype);
  const auto* in = static_cast<const uint8_t*>(send);
  auto* out = static_cast<uint8_t*>(recv);
  const size_t total = size_t(n) * bytes;
  if (in < out + total && out < in + total) {  // in place: send from a copy
    Buffer& staged = context.workspace->buffer(Slot::AlltoallOut, 0);
    staged.resize(total);
    context.executor->copy(staged.data(), in, total);
    in = staged.data();
  }
  StreamExchange& x = *context.exchange;
  x.groupStart();
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    sendCounted(context, p, in + size_t(p) * bytes, bytes);
    recvCounted(context, p, out + size_t(p) * bytes, bytes);
  }
  x.groupEnd();
  context.executor->copy(out + size_t(me) * bytes, in + size_t(me) * bytes, bytes);
}

void barrierStream(Context& context) {
  float* word = context.workspace->floats(Slot::BarrierWord, 1);
  context.executor->zero(word, sizeof(float));
  context.exchange->allReduce(word, word, 1, qcclFloat32, qcclSum);
}

}  // namespace qccl::coll
