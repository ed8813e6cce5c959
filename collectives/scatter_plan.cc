#include "collectives/scatter_plan.h"

#include <algorithm>

#include "collectives/chunk_codec.h"
#include "collectives/reduction.h"

namespace qccl::coll {

ScatterPlan::ScatterPlan(Context& context, const ReduceArgs& args, std::vector<Span> spans)
    : context_(context), args_(args), me_(context.group.me) {
  for (const Span& s : spans) segments_.emplace_back(context, s, args.dtype);
  for (const Segments& s : segments_) rounds_ = std::max(rounds_, s.size());
  Workspace& ws = *context.workspace;
  for (int p = 0; p < context.group.size(); ++p) {
    if (p == me_) continue;
    ws.buffer(Slot::ScatterIn, size_t(p)).resize(mine().totalBytes());
    ws.buffer(Slot::ScatterOut, size_t(p)).resize(chunk(p).totalBytes());
  }
  sums_ = ws.floats(Slot::ScatterSums, spans[size_t(me_)].size());
}

uint8_t* ScatterPlan::outbox(int p, size_t k) {
  return context_.workspace->buffer(Slot::ScatterOut, size_t(p)).data() + chunk(p).offset(k);
}

uint8_t* ScatterPlan::inbox(int p, size_t k) {
  return context_.workspace->buffer(Slot::ScatterIn, size_t(p)).data() + mine().offset(k);
}

EncodeTask ScatterPlan::encodeTask(int p, size_t k) {
  const Span s = chunk(p).span(k);
  const auto* send = static_cast<const uint8_t*>(args_.send);
  return coll::encodeTask(context_, send + s.begin * dataTypeSize(args_.dtype), s.size(),
                          args_.dtype, {Residuals::kWorker, args_.count, s.begin}, s.begin,
                          outbox(p, k), chunk(p).bytes(k));
}

ScatterPlan::Reduced ScatterPlan::reduce(size_t k) {
  const int n = context_.group.size();
  const Span s = mine().span(k);
  float* sums = sums_ + (s.begin - mine().span(0).begin);
  Executor& exec = *context_.executor;
  exec.zero(sums, s.size() * sizeof(float));
  ok_ = ok_ && context_.usageError.empty();
  for (int p = 0; p < n; ++p) {
    if (p == me_) {
      const auto* send = static_cast<const uint8_t*>(args_.send);
      exec.addToFloat32(send + s.begin * dataTypeSize(args_.dtype), args_.dtype, s.size(), sums);
    } else if (ok_ && acceptChunk(context_, inbox(p, k), mine().bytes(k), s.size(), p)) {
      decodeChunk(context_, inbox(p, k), mine().bytes(k), s.size(), args_.dtype, qcclFloat32, sums,
                  true);
    } else {
      ok_ = false;
    }
  }
  if (args_.op == qcclAvg) exec.divide(sums, s.size(), float(n));
  return {s, sums, ok_};
}

}  // namespace qccl::coll
