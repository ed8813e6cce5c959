#include "collectives/scatter_reduce.h"

#include "collectives/chunk_codec.h"

namespace qccl::coll {

ScatterReduce::ScatterReduce(Context& context, const ReduceArgs& args, std::vector<Span> spans)
    : context_(context), me_(context.group.me), plan_(context, args, spans), phase_(context) {
  const int n = context.group.size();
  const Segments& mine = plan_.mine();
  inbox_.resize(size_t(n));
  for (int p = 0; p < n; ++p) {
    if (p == me_) continue;
    for (size_t k = 0; k < mine.size(); ++k) {
      inbox_[size_t(p)].push_back(phase_.recv(p, plan_.inbox(p, k), mine.bytes(k)));
    }
  }
}

bool ScatterReduce::sendNext() {
  const int n = context_.group.size();
  for (; sendRound_ < plan_.rounds(); ++sendRound_, sendOffset_ = 1) {
    for (; sendOffset_ < n; ++sendOffset_) {
      const int p = (me_ + sendOffset_) % n;
      const size_t k = sendRound_;
      if (k >= plan_.chunk(p).size()) continue;
      const EncodeTask task = plan_.encodeTask(p, k);
      context_.executor->encode(codecCall(context_), &task, 1);
      phase_.send(p, task.out, task.outBytes);
      ++sendOffset_;
      return true;
    }
  }
  return false;
}

bool ScatterReduce::reduceNext(Reduced& reduced) {
  const size_t k = nextReduce_;
  if (k == plan_.mine().size()) return false;
  for (int p = 0; p < context_.group.size(); ++p) {
    if (p != me_ && !phase_.done(inbox_[size_t(p)][k])) return false;
  }
  const ScatterPlan::Reduced r = plan_.reduce(k);
  reduced = {k, r.span, r.values, r.ok};
  ++nextReduce_;
  return true;
}

}  // namespace qccl::coll
