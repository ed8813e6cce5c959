// The allreduce variants behind coll::allreduce (allreduce.cc picks one). A disagreement between
// the ranks is recorded in the context, not thrown: every phase still runs (so the peers learn of
// it), the output is left untouched, and the caller throws.
#pragma once

#include "collectives/collectives.h"

namespace qccl::coll {

void allreduceExact(Context& context, const ReduceArgs& args);
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
