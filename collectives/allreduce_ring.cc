// Compressed ring allreduce (docs/ALGORITHMS.md): n-1 reduce-scatter steps around the ring, each
// decoding the partial sum from the left, adding this rank's chunk and re-encoding it (with error
// feedback per chunk slot): more quantization error than scatter-reduce-allgather, but messages
// only between ring neighbours. The owner of each reduced chunk encodes it once (server error
// feedback); the allgather steps forward those bytes unchanged, so all outputs are identical.
#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/messages.h"
#include "collectives/partition.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void allreduceRing(Context& context, const ReduceArgs& a) {
  const int n = context.group.size(), me = context.group.me;
  const int left = (me + n - 1) % n, right = (me + 1) % n;
  const std::vector<Span> spans = partition(a.count, n, chunkUnit(context));
  auto chunkOf = [&](int step) { return ((me - step) % n + n) % n; };

  Workspace& ws = *context.workspace;
  // This rank's vector in fp32, so every message has the same source dtype.
  float* values = ws.floats(Slot::RingValues, a.count);
  Executor& exec = *context.executor;
  exec.toFloat32(a.send, a.dtype, a.count, values);
  Buffer& outgoing = ws.buffer(Slot::RingOutgoing, 0);
  Buffer& incoming = ws.buffer(Slot::RingIncoming, 0);
  float* partial = ws.floats(Slot::RingPartial, spans.empty() ? 0 : spans[0].size());
  auto encodeSlot = [&](int c, const float* data, Residuals::Slot slot) {
    const Span s = spans[size_t(c)];
    const size_t slotCount = slot == Residuals::kWorker ? a.count : s.size();
    const size_t slotOffset = slot == Residuals::kWorker ? s.begin : 0;
    if (context.usageError.empty()) {
      encodeChunk(context, data, s.size(), qcclFloat32, {slot, slotCount, slotOffset}, s.begin,
                  outgoing);
    } else {
      outgoing.resize(chunkBytes(context, s.size(), qcclFloat32));
      writePoison(outgoing.data(), outgoing.size(), context.globalRank());
    }
  };

  // Reduce-scatter: at step s send chunk (me - s), receive chunk (me - s - 1) from the left.
  encodeSlot(chunkOf(0), values + spans[size_t(chunkOf(0))].begin, Residuals::kWorker);
  for (int step = 0; step < n - 1; ++step) {
    const int c = chunkOf(step + 1);
    const Span s = spans[size_t(c)];
    incoming.resize(chunkBytes(context, s.size(), qcclFloat32));
    {
      Phase phase(context);
      phase.recv(left, incoming.data(), incoming.size());
      phase.send(right, outgoing.data(), outgoing.size());
      phase.wait();
    }
    exec.copy(partial, values + s.begin, 4 * s.size());
    if (acceptChunk(context, incoming.data(), incoming.size(), s.size(), left)) {
      decodeChunk(context, incoming.data(), incoming.size(), s.size(), qcclFloat32, qcclFloat32,
                  partial, true);
    }
    if (step < n - 2) {
      encodeSlot(c, partial, Residuals::kWorker);
    } else {  // the last step leaves this rank with chunk (me + 1) fully reduced
      if (a.op == qcclAvg) exec.divide(partial, s.size(), float(n));
      encodeSlot(c, partial, Residuals::kServer);
    }
  }

  // Allgather: forward the encoded reduced chunks around the ring.
  auto reduced = [&](int c) -> Buffer& { return ws.buffer(Slot::RingReduced, size_t(c)); };
  reduced(right).resize(outgoing.size());  // this rank owns chunk (me + 1)
  exec.copy(reduced(right).data(), outgoing.data(), outgoing.size());
  for (int step = 0; step < n - 1; ++step) {
    const int sendChunk = ((right - step) % n + n) % n;
    const int recvChunk = ((me - step) % n + n) % n;
    Buffer& into = reduced(recvChunk);
    into.resize(chunkBytes(context, spans[size_t(recvChunk)].size(), qcclFloat32));
    Phase phase(context);
    phase.recv(left, into.data(), into.size());
    phase.send(right, reduced(sendChunk).data(), reduced(sendChunk).size());
    phase.wait();
  }
  for (int c = 0; c < n; ++c) {
    acceptChunk(context, reduced(c).data(), reduced(c).size(), spans[size_t(c)].size(), left);
  }
  if (!context.usageError.empty()) return;  // the caller reports it; the output stays untouched
  auto* recv = static_cast<uint8_t*>(a.recv);
  const size_t width = dataTypeSize(a.dtype);
  for (int c = 0; c < n; ++c) {
    const Span s = spans[size_t(c)];
    decodeChunk(context, reduced(c).data(), reduced(c).size(), s.size(), qcclFloat32, a.dtype,
                recv + s.begin * width, false);
  }
}

}  // namespace qccl::coll
