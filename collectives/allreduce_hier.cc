// Hierarchical allreduce (docs/ALGORITHMS.md): ranks form groups of groupSize consecutive ranks
// (e.g. one per node). Exact reduce-scatter inside each group (fp32), a compressed
// scatter-reduce-allgather across groups among the ranks that hold the same slice, then an exact
// allgather inside each group. Only the cross-group traffic is compressed.
#include <cstring>

#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/messages.h"
#include "collectives/partition.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"
#include "common/error.h"

namespace qccl::coll {

namespace {

constexpr uint8_t kKindSlice = 3;
constexpr uint8_t kKindReducedSlice = 4;

// Sends slices[p] of `values` to local rank p and returns the received messages (validated).
std::vector<std::vector<uint8_t>> exchangeSlices(Context& context,
                                                 const std::vector<Span>& sendSpans,
                                                 const float* values,
                                                 const std::vector<Span>& recvSpans, uint8_t kind) {
  const int g = context.group.size(), me = context.group.me;
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(g)), in(static_cast<size_t>(g));
  Phase phase(context);
  for (int p = 0; p < g; ++p) {
    if (p == me) continue;
    const Span s = sendSpans[size_t(p)];
    out[size_t(p)].resize(kExactHeaderBytes + 4 * s.size());
    if (context.usageError.empty()) {
      writeExactHeader(out[size_t(p)].data(), qcclFloat32, qcclSum, kind, s.size());
      std::memcpy(out[size_t(p)].data() + kExactHeaderBytes, values + s.begin, 4 * s.size());
    } else {
      writePoison(out[size_t(p)].data(), out[size_t(p)].size(), context.globalRank());
    }
    in[size_t(p)].assign(kExactHeaderBytes + 4 * recvSpans[size_t(p)].size(), 0);
    phase.recv(p, in[size_t(p)].data(), in[size_t(p)].size());
    phase.send(p, out[size_t(p)].data(), out[size_t(p)].size());
  }
  phase.wait();
  for (int p = 0; p < g; ++p) {
    if (p != me)
      acceptExact(context, in[size_t(p)], qcclFloat32, qcclSum, kind, recvSpans[size_t(p)].size(),
                  p);
  }
  return in;
}

}  // namespace

void allreduceHier(Context& context, const ReduceArgs& a, int groupSize) {
  const int n = context.group.size(), me = context.group.me;
  if (groupSize <= 0 || n % groupSize != 0) {
    throwError(qcclInvalidArgument, "hier: %d ranks do not split into groups of %d", n, groupSize);
  }
  const int groups = n / groupSize, local = me % groupSize, groupIndex = me / groupSize;
  Group inside, across;
  for (int i = 0; i < groupSize; ++i)
    inside.ranks.push_back(context.group.ranks[size_t(groupIndex * groupSize + i)]);
  inside.me = local;
  for (int g = 0; g < groups; ++g)
    across.ranks.push_back(context.group.ranks[size_t(g * groupSize + local)]);
  across.me = groupIndex;

  const std::vector<Span> slices = partition(a.count, groupSize, chunkUnit(context));
  const Span mine = slices[size_t(local)];
  std::vector<float> values(a.count);
  toFloat32(a.send, a.dtype, a.count, values.data());
  const Group whole = context.group;

  // 1. Exact reduce-scatter inside the group, in local rank order.
  context.group = inside;
  std::vector<Span> mineForAll(static_cast<size_t>(groupSize), mine);
  std::vector<std::vector<uint8_t>> in =
      exchangeSlices(context, slices, values.data(), mineForAll, kKindSlice);
  std::vector<float> slice(mine.size(), 0.0f);
  for (int p = 0; p < groupSize; ++p) {
    const float* from =
        p == local ? values.data() + mine.begin
                   : reinterpret_cast<const float*>(in[size_t(p)].data() + kExactHeaderBytes);
    for (size_t i = 0; i < mine.size(); ++i) slice[i] += from[i];
  }

  // 2. Compressed allreduce of the slice across groups (sums; Avg divides at the end).
  context.group = across;
  std::vector<float> reduced(mine.size());
  if (groups > 1) {
    allreduceSra(context,
                 ReduceArgs{slice.data(), reduced.data(), mine.size(), qcclFloat32, qcclSum});
  } else {
    reduced = slice;
  }

  // 3. Exact allgather inside the group.
  context.group = inside;
  std::vector<Span> ownForAll(static_cast<size_t>(groupSize), Span{0, mine.size()});
  in = exchangeSlices(context, ownForAll, reduced.data(), slices, kKindReducedSlice);
  context.group = whole;
  if (!context.usageError.empty()) return;  // the caller reports it; the output stays untouched
  for (int p = 0; p < groupSize; ++p) {
    const float* from =
        p == local ? reduced.data()
                   : reinterpret_cast<const float*>(in[size_t(p)].data() + kExactHeaderBytes);
    std::memcpy(values.data() + slices[size_t(p)].begin, from, 4 * slices[size_t(p)].size());
  }
  if (a.op == qcclAvg) {
    for (float& v : values) v /= float(n);
  }
  fromFloat32(values.data(), a.count, a.dtype, a.recv);
}

}  // namespace qccl::coll
