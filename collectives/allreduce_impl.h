// The allreduce variants behind coll::allreduce (allreduce.cc picks one). A disagreement between
// the ranks is recorded in the context, not thrown: every phase still runs (so the peers learn of
// it), the output is left untouched, and the caller throws.
#pragma once

#include "collectives/collectives.h"

namespace qccl::coll {

void allreduceExact(Context& context, const ReduceArgs& args);
// Up to this many bytes per rank on the wire, the round saved outweighs the extra bytes (n - 1
// whole vectors instead of two rounds of 1/n of one each). On the emulated cluster (4 ranks,
// medians of three runs) a 4 KiB call, 12 KiB in one round, took 101 us against 194 us in two;
// at 8 KiB (24 KiB) the two were within the runs' spread (198 and 186 us): docs/PERFORMANCE.md.
constexpr size_t kOneRoundWireBytes = 16 << 10;

// Whether an exact allreduce of `bytes` bytes on n ranks runs in one round (every rank sends its
// whole vector to everyone) rather than two (scatter-reduce, allgather): the same sums in the
// same order either way, so only the time and the bytes on the wire differ.
inline bool exactAllreduceInOneRound(size_t bytes, int n) {
  return size_t(n - 1) * bytes <= kOneRoundWireBytes;
}
// Compressed, float dtypes, Sum or Avg.
void allreduceSra(Context& context, const ReduceArgs& args);
void allreduceRing(Context& context, const ReduceArgs& args);
void allreduceHier(Context& context, const ReduceArgs& args, int groupSize);
void allreduceGather(Context& context, const ReduceArgs& args);

// hier's subgroups of `whole` (groupSize must divide its size): this rank's group of groupSize
// consecutive ranks, and the ranks at this rank's place in every group.
struct HierGroups {
  Group inside;
  Group across;
};
HierGroups hierGroups(const Group& whole, int groupSize);

}  // namespace qccl::coll
