#include "collectives/gather_plan.h"

#include "collectives/chunk_codec.h"
#include "collectives/reduction.h"

namespace qccl::coll {

GatherPlan::GatherPlan(Context& context, std::vector<Span> spans, qcclDataType_t encodedType,
                       void* out, qcclDataType_t outType)
    : context_(context),
      me_(context.group.me),
      encodedType_(encodedType),
      out_(static_cast<uint8_t*>(out)),
      outType_(outType) {
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
  decodeChunk(context_, segment(p, k), bytes, s.size(), encodedType_, outType_,
              out_ + s.begin * dataTypeSize(outType_), false);
}

}  // namespace qccl::coll
