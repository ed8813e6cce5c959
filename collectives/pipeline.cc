#include "collectives/pipeline.h"

#include <algorithm>

#include "collectives/chunk_codec.h"

namespace qccl::coll {

size_t segmentStep(size_t count, size_t segmentElements, size_t unit) {
  if (segmentElements == 0) return std::max<size_t>(count, 1);
  return std::max(unit, segmentElements / unit * unit);
}

Segments::Segments(const Context& context, Span whole, qcclDataType_t dtype) {
  const size_t step = segmentStep(whole.size(), context.segmentElements, chunkUnit(context));
  offsets_.push_back(0);
  for (size_t begin = whole.begin; begin < whole.end; begin += step) {
    const Span s{begin, std::min(whole.end, begin + step)};
    spans_.push_back(s);
    offsets_.push_back(offsets_.back() + chunkBytes(context, s.size(), dtype));
  }
}

void runUntil(const Context& context, const std::function<bool()>& step,
              const std::function<bool()>& finished, const std::function<std::string()>& awaited) {
  Backoff backoff(context);
  while (!finished()) {
    if (step()) {
      backoff.progressed();
    } else {
      backoff.idle(awaited);
    }
  }
}

}  // namespace qccl::coll
