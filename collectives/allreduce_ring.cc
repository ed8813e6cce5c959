// Compressed ring allreduce (docs/ALGORITHMS.md): n-1 reduce-scatter steps around the ring, each
// decoding the partial sum from the left, adding this rank's chunk and re-encoding it (with error
// feedback per chunk slot): more quantization error than scatter-reduce-allgather, but messages
// only between ring neighbours. The owner of each reduced chunk encodes it once (server error
// feedback); the allgather steps forward those bytes unchanged, so all outputs are identical.
#include <cstring>

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

  // This rank's vector in fp32, so every message has the same source dtype.
  std::vector<float> values(a.count);
  toFloat32(a.send, a.dtype, a.count, values.data());

  std::vector<uint8_t> outgoing, incoming;
  std::vector<float> partial;
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
  encodeSlot(chunkOf(0), values.data() + spans[size_t(chunkOf(0))].begin, Residuals::kWorker);
  for (int step = 0; step < n - 1; ++step) {
    const int c = chunkOf(step + 1);
    const Span s = spans[size_t(c)];
    incoming.assign(chunkBytes(context, s.size(), qcclFloat32), 0);
    {
      Phase phase(context);
      phase.recv(left, incoming.data(), incoming.size());
      phase.send(right, outgoing.data(), outgoing.size());
      phase.wait();
    }
    partial.assign(values.begin() + long(s.begin), values.begin() + long(s.end));
    if (acceptChunk(context, incoming, s.size(), left)) {
      decodeChunk(context, incoming, s.size(), qcclFloat32, partial.data(), true);
    }
    if (step < n - 2) {
      encodeSlot(c, partial.data(), Residuals::kWorker);
    } else {  // the last step leaves this rank with chunk (me + 1) fully reduced
      if (a.op == qcclAvg) {
        for (float& v : partial) v /= float(n);
      }
      encodeSlot(c, partial.data(), Residuals::kServer);
    }
  }

  // Allgather: forward the encoded reduced chunks around the ring.
  std::vector<std::vector<uint8_t>> reduced(static_cast<size_t>(n));
  reduced[size_t(right)] = outgoing;  // this rank owns chunk (me + 1)
  for (int step = 0; step < n - 1; ++step) {
    const int sendChunk = ((right - step) % n + n) % n;
    const int recvChunk = ((me - step) % n + n) % n;
    std::vector<uint8_t>& into = reduced[size_t(recvChunk)];
    into.assign(chunkBytes(context, spans[size_t(recvChunk)].size(), qcclFloat32), 0);
    Phase phase(context);
    phase.recv(left, into.data(), into.size());
    phase.send(right, reduced[size_t(sendChunk)].data(), reduced[size_t(sendChunk)].size());
    phase.wait();
  }
  for (int c = 0; c < n; ++c)
    acceptChunk(context, reduced[size_t(c)], spans[size_t(c)].size(), left);
  if (!context.usageError.empty()) return;  // the caller reports it; the output stays untouched
  auto* recv = static_cast<uint8_t*>(a.recv);
  const size_t width = dataTypeSize(a.dtype);
  for (int c = 0; c < n; ++c) {
    const Span s = spans[size_t(c)];
    decodeChunk(context, reduced[size_t(c)], s.size(), a.dtype, recv + s.begin * width, false);
  }
}

}  // namespace qccl::coll
