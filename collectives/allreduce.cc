#include "collectives/allreduce_impl.h"
#include "collectives/reduction.h"
#include "src/common/error.h"

namespace qccl::coll {

void throwIfUsageError(const Context& context) {
  if (!context.usageError.empty()) throwError(qcclInvalidUsage, "%s", context.usageError.c_str());
}

void allreduce(Context& context, const ReduceArgs& args, bool compressed,
               AllreduceAlgorithm algorithm, int hierGroupSize) {
  if (context.group.size() == 1 && !compressed) {  // nothing to exchange; Avg is the identity
    context.executor->copy(args.recv, args.send, args.count * dataTypeSize(args.dtype));
    return;
  }
  if (!compressed) {
    allreduceExact(context, args);
  } else if (algorithm == AllreduceAlgorithm::Ring) {
    allreduceRing(context, args);
  } else if (algorithm == AllreduceAlgorithm::Hier) {
    allreduceHier(context, args, hierGroupSize);
  } else if (algorithm == AllreduceAlgorithm::Gather) {
    allreduceGather(context, args);
  } else {
    allreduceSra(context, args);
  }
  throwIfUsageError(context);
}

}  // namespace qccl::coll
