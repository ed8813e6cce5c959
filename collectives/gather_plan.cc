#include "collectives/gather_plan.h"

#include "collectives/chunk_codec.h"
#include "collectives/reduction.h"

namespace qccl::coll {

GatherPlan::GatherPlan(Context& context, std::vector<Span> spans, qcclDataType_t encodedType,
                       void* out, qcclDataType_t outType, bool accumulate)
    : context_(context),
      me_(context.group.me),
      encodedType_(encodedType),
      out_(static_cast<uint8_t*>(out)),
      outType_(outType),
      accumulate_(accumulate) {
  for (const Span& s : spans) segments_.emplace_back(context, s, encodedType);
  for (int p = 0; p < context.group.size(); ++p) {
    context.workspace->buffer(Slot::GatherIn, size_t(p)).resize(chunk(p).totalBytes());
  }
}

uint8_t* GatherPlan::segment(int p, size_t k) {
  return context_.workspace->buffer(Slot::GatherIn, size_t(p)).data() + chunk(p).offset(k);
}

void GatherPlan::decode(int p, size_t k) {
  const Span s = chunk(p).span(k);
  const size_t bytes = chunk(p).bytes(k);
  if (p != me_ && !acceptChunk(context_, segment(p, k), bytes, s.size(), p)) return;
  uint8_t* out = out_ + s.begin * dataTypeSize(outType_);
  if (!accumulate_ || outType_ == qcclFloat32) {
    decodeChunk(context_, segment(p, k), bytes, s.size(), encodedType_, outType_, out, accumulate_);
    return;
  }
  // A 16-bit output is added to in fp32 and rounded once.
  Executor& exec = *context_.executor;
  float* sums = context_.workspace->floats(Slot::GatherSums, s.size());
  exec.toFloat32(out, outType_, s.size(), sums);
  decodeChunk(context_, segment(p, k), bytes, s.size(), encodedType_, qcclFloat32, sums, true);
  exec.fromFloat32(sums, s.size(), outType_, out);
}

}  // namespace qccl::coll
