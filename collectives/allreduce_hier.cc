// Hierarchical allreduce (docs/ALGORITHMS.md): ranks form groups of groupSize consecutive ranks
// (e.g. one per node). Exact reduce-scatter inside each group (fp32), a compressed
// scatter-reduce-allgather across groups among the ranks that hold the same slice, then an exact
// allgather inside each group. Only the cross-group traffic is compressed.
#include <algorithm>

#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/messages.h"
#include "collectives/partition.h"
#include "collectives/phase.h"
#include "collectives/reduction.h"
#include "src/common/error.h"

namespace qccl::coll {

namespace {

// Sends sendSpans[p] of `values` (fp32) to group member p and receives recvSpans[p] floats from
// it into the workspace's "hier.in" buffers (header first), checking what arrives.
void exchangeSlices(Context& context, const std::vector<Span>& sendSpans, const float* values,
                    const std::vector<Span>& recvSpans, MessageKind kind) {
  const int g = context.group.size(), me = context.group.me;
  Workspace& ws = *context.workspace;
  Phase phase(context);
  for (int p = 0; p < g; ++p) {
    if (p == me) continue;
    const Span s = sendSpans[size_t(p)];
    Buffer& out = ws.buffer(Slot::HierOut, size_t(p));
    out.resize(kExactHeaderBytes + 4 * s.size());
    if (context.usageError.empty()) {
      writeExactHeader(out.data(), qcclFloat32, qcclSum, kind, s.size());
      context.executor->copy(out.data() + kExactHeaderBytes, values + s.begin, 4 * s.size());
    } else {
      writePoison(out.data(), out.size(), context.globalRank());
    }
    Buffer& in = ws.buffer(Slot::HierIn, size_t(p));
    in.resize(kExactHeaderBytes + 4 * recvSpans[size_t(p)].size());
    phase.recv(p, in.data(), in.size());
    phase.send(p, out.data(), out.size());
  }
  phase.wait();
  for (int p = 0; p < g; ++p) {
    if (p != me) {
      acceptExact(context, ws.buffer(Slot::HierIn, size_t(p)), qcclFloat32, qcclSum, kind,
                  recvSpans[size_t(p)].size(), p);
    }
  }
}

const float* received(Context& context, int p) {
  return reinterpret_cast<const float*>(context.workspace->buffer(Slot::HierIn, size_t(p)).data() +
                                        kExactHeaderBytes);
}

}  // namespace

HierGroups hierGroups(const Group& whole, int groupSize) {
  const int n = whole.size(), me = whole.me;
  const int local = me % groupSize, groupIndex = me / groupSize;
  HierGroups h;
  for (int i = 0; i < groupSize; ++i) {
    h.inside.ranks.push_back(whole.ranks[size_t(groupIndex * groupSize + i)]);
  }
  h.inside.me = local;
  for (int g = 0; g < n / groupSize; ++g) {
    h.across.ranks.push_back(whole.ranks[size_t(g * groupSize + local)]);
  }
  h.across.me = groupIndex;
  return h;
}

void allreduceHier(Context& context, const ReduceArgs& a, int groupSize) {
  const int n = context.group.size(), me = context.group.me;
  if (groupSize <= 0 || n % groupSize != 0) {
    throwError(qcclInvalidArgument, "hier: %d ranks do not split into groups of %d", n, groupSize);
  }
  const int groups = n / groupSize, local = me % groupSize;
  const auto [inside, across] = hierGroups(context.group, groupSize);

  const std::vector<Span> slices = partition(a.count, groupSize, chunkUnit(context));
  const Span mine = slices[size_t(local)];
  Workspace& ws = *context.workspace;
  float* values = ws.floats(Slot::HierValues, a.count);
  Executor& exec = *context.executor;
  exec.toFloat32(a.send, a.dtype, a.count, values);
  const Group whole = context.group;

  // 1. Exact reduce-scatter inside the group, in local rank order.
  context.group = inside;
  exchangeSlices(context, slices, values, std::vector<Span>(size_t(groupSize), mine),
                 MessageKind::HierSlice);
  float* slice = ws.floats(Slot::HierSlice, mine.size());
  exec.zero(slice, 4 * mine.size());
  for (int p = 0; p < groupSize; ++p) {
    const float* from = p == local ? values + mine.begin : received(context, p);
    exec.addToFloat32(from, qcclFloat32, mine.size(), slice);
  }

  // 2. Compressed allreduce of the slice across groups (sums; Avg divides at the end).
  context.group = across;
  float* reduced = ws.floats(Slot::HierReduced, mine.size());
  if (groups > 1) {
    allreduceSra(context, ReduceArgs{slice, reduced, mine.size(), qcclFloat32, qcclSum});
  } else {
    exec.copy(reduced, slice, 4 * mine.size());
  }

  // 3. Exact allgather inside the group.
  context.group = inside;
  exchangeSlices(context, std::vector<Span>(size_t(groupSize), Span{0, mine.size()}), reduced,
                 slices, MessageKind::HierReducedSlice);
  context.group = whole;
  if (!context.usageError.empty()) return;  // the caller reports it; the output stays untouched
  for (int p = 0; p < groupSize; ++p) {
    const float* from = p == local ? reduced : received(context, p);
    exec.copy(values + slices[size_t(p)].begin, from, 4 * slices[size_t(p)].size());
  }
  if (a.op == qcclAvg) exec.divide(values, a.count, float(n));
  exec.fromFloat32(values, a.count, a.dtype, a.recv);
}

}  // namespace qccl::coll
