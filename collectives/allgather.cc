// Allgather (docs/ALGORITHMS.md). Compressed: each rank encodes its shard once (worker error
// feedback) and sends the bytes to everyone; every rank decodes every shard, its own too, so the
// replicas are identical (or keeps its own exact with QCCL_CALL_KEEP_OWN_SHARD). With
// QCCL_CALL_DELTA each rank encodes instead its shard's change since the previous result, which
// the output holds, and every rank adds every decoded change to it: what is not sent stays in the
// difference between a shard and its replica and goes out with a later call (SCAPE-style sparse
// parameter updates). Exact: framed raw values, or for large shards pipelined raw segments
// (exact_pipeline.h).
#include <cstring>

#include "collectives/call_agreement.h"
#include "collectives/chunk_codec.h"
#include "collectives/collectives.h"
#include "collectives/exact_pipeline.h"
#include "collectives/gather_segments.h"
#include "collectives/messages.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

namespace {

// Every shard straight from its owner's input into place in every output, segment by segment.
void allgatherExactPipelined(Context& context, const void* send, void* recv, size_t sendCount,
                             qcclDataType_t dtype, size_t step) {
  const int n = context.group.size(), me = context.group.me;
  if (!agreeOnCall(context, {MessageKind::ExactAllgatherCall, dtype, 0, sendCount, true}))
    throwIfUsageError(context);
  const std::vector<Span> spans = equalSpans(sendCount, n);
  ExactGather gather(context, spans, step, dtype, recv);
  const size_t width = dataTypeSize(dtype);
  const auto* from = static_cast<const uint8_t*>(send);
  for (size_t k = 0; k < gather.mine().size(); ++k) {
    gather.share(k, from + (gather.mine()[k].begin - spans[size_t(me)].begin) * width);
  }
  uint8_t* own = static_cast<uint8_t*>(recv) + spans[size_t(me)].begin * width;
  if (own != send) context.executor->copy(own, send, sendCount * width);  // while the wire works
  gather.wait();
}

void allgatherExact(Context& context, const void* send, void* recv, size_t sendCount,
                    qcclDataType_t dtype) {
  const int n = context.group.size(), me = context.group.me;
  const size_t shardBytes = sendCount * dataTypeSize(dtype);
  if (const size_t step =
          exactSegmentStep(sendCount, dataTypeSize(dtype), context.segmentElements)) {
    allgatherExactPipelined(context, send, recv, sendCount, dtype, step);
    return;
  }
  Workspace& ws = *context.workspace;
  Buffer& mine = ws.buffer(Slot::AllgatherMine, 0);
  mine.resize(kExactHeaderBytes + shardBytes);
  writeExactHeader(mine.data(), dtype, 0, MessageKind::ExactShard, sendCount);
  Executor& exec = *context.executor;
  exec.copy(mine.data() + kExactHeaderBytes, send, shardBytes);
  auto in = [&](int p) -> Buffer& { return ws.buffer(Slot::AllgatherIn, size_t(p)); };
  {
    Phase phase(context);
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      in(p).resize(mine.size());
      phase.recv(p, in(p).data(), in(p).size());
      phase.send(p, mine.data(), mine.size());
    }
    phase.wait();
  }
  for (int p = 0; p < n; ++p) {
    if (p != me) acceptExact(context, in(p), dtype, 0, MessageKind::ExactShard, sendCount, p);
  }
  throwIfUsageError(context);
  auto* out = static_cast<uint8_t*>(recv);
  for (int p = 0; p < n; ++p) {
    if (p != me)
      exec.copy(out + size_t(p) * shardBytes, in(p).data() + kExactHeaderBytes, shardBytes);
  }
  exec.copy(out + size_t(me) * shardBytes, send, shardBytes);
}

// Pipelined: the own shard is encoded segment by segment, each segment shared as soon as it is
// encoded; the peers' segments are decoded as they arrive.
void allgatherCompressed(Context& context, const void* send, void* recv, size_t sendCount,
                         qcclDataType_t dtype, GatherMode mode) {
  const int n = context.group.size(), me = context.group.me;
  const bool delta = mode == GatherMode::Delta;
  const MessageKind kind = delta ? MessageKind::DeltaAllgatherCall : MessageKind::AllgatherCall;
  if (!agreeOnCall(context, {kind, dtype, 0, sendCount})) throwIfUsageError(context);
  const size_t width = dataTypeSize(dtype), first = size_t(me) * sendCount;
  const std::vector<Span> spans = equalSpans(sendCount, n);
  // A change is encoded from fp32: the shard minus its replica in the output.
  GatherSegments gather(context, spans, delta ? qcclFloat32 : dtype, recv, dtype, delta);
  auto step = [&] {
    const bool progressed = gather.poll();
    return gather.decodeArrived() || progressed;
  };
  const Segments& own = gather.own();
  Executor& exec = *context.executor;
  for (size_t k = 0; k < own.size(); ++k) {
    const Span s = own.span(k);
    const uint8_t* input = static_cast<const uint8_t*>(send) + (s.begin - first) * width;
    qcclDataType_t inputType = dtype;
    if (delta) {  // x - replica, as -replica + x (exact either way)
      float* change = context.workspace->floats(Slot::DeltaChange, s.size());
      exec.toFloat32(static_cast<const uint8_t*>(recv) + s.begin * width, dtype, s.size(), change);
      exec.divide(change, s.size(), -1.0f);
      exec.addToFloat32(input, dtype, s.size(), change);
      input = reinterpret_cast<const uint8_t*>(change);
      inputType = qcclFloat32;
    }
    encodeChunk(context, input, s.size(), inputType,
                {Residuals::kWorker, sendCount, s.begin - first}, s.begin - first,
                gather.ownSegment(k), own.bytes(k));
    gather.share(k);
    step();
  }
  runUntil(
      context, step, [&] { return gather.decodedAll(); }, [&] { return gather.awaited(); });
  gather.wait();
  throwIfUsageError(context);
  // The own shard last: with an in-place call it is the input of the encodes above, and a
  // change was taken against it.
  uint8_t* mine = static_cast<uint8_t*>(recv) + first * width;
  if (mode != GatherMode::KeepOwnExact) {
    for (size_t k = 0; k < own.size(); ++k) gather.decodeOwn(k);
  } else {
    exec.copy(mine, send, sendCount * width);
  }
}

}  // namespace

void allgather(Context& context, const void* send, void* recv, size_t sendCount,
               qcclDataType_t dtype, bool compressed, GatherMode mode) {
  if (compressed) {
    allgatherCompressed(context, send, recv, sendCount, dtype, mode);
  } else {
    allgatherExact(context, send, recv, sendCount, dtype);
  }
}

}  // namespace qccl::coll
