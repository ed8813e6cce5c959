#include "collectives/partition.h"

namespace qccl::coll {

std::vector<Span> partition(size_t count, int parts, size_t unit) {
  const size_t units = (count + unit - 1) / unit;
  const size_t perPart = (units + size_t(parts) - 1) / size_t(parts) * unit;
  std::vector<Span> spans(static_cast<size_t>(parts));
  for (size_t p = 0; p < spans.size(); ++p) {
    spans[p].begin = std::min(count, p * perPart);
    spans[p].end = std::min(count, (p + 1) * perPart);
  }
  return spans;
}

std::vector<Span> equalSpans(size_t each, int parts) {
  std::vector<Span> spans(static_cast<size_t>(parts));
  for (size_t p = 0; p < spans.size(); ++p) spans[p] = {p * each, (p + 1) * each};
  return spans;
}

}  // namespace qccl::coll
