#include "collectives/pipeline.h"

#include <algorithm>

#include "collectives/chunk_codec.h"

namespace qccl::coll {

Segments::Segments(const Context& context, Span whole, qcclDataType_t dtype) {
  const size_t unit = chunkUnit(context);
  const size_t step = context.segmentElements == 0
                          ? std::max<size_t>(whole.size(), 1)  // not segmented
                          : std::max(unit, context.segmentElements / unit * unit);
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
