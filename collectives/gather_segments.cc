#include "collectives/gather_segments.h"

namespace qccl::coll {

GatherSegments::GatherSegments(Context& context, std::vector<Span> spans,
                               qcclDataType_t encodedType, void* out, qcclDataType_t outType,
                               bool accumulate)
    : context_(context),
      me_(context.group.me),
      plan_(context, spans, encodedType, out, outType, accumulate),
      phase_(context) {
  const int n = context.group.size();
  inbox_.resize(size_t(n));
  decoded_.assign(size_t(n), 0);
  for (int p = 0; p < n; ++p) {
    if (p == me_) continue;  // the own buffer holds what this rank shares
    const Segments& theirs = plan_.chunk(p);
    for (size_t k = 0; k < theirs.size(); ++k) {
      inbox_[size_t(p)].push_back(phase_.recv(p, plan_.segment(p, k), theirs.bytes(k)));
    }
  }
}

void GatherSegments::share(size_t k) {
  for (int p = 0; p < context_.group.size(); ++p) {
    if (p != me_) phase_.send(p, ownSegment(k), own().bytes(k));
  }
}

bool GatherSegments::decodeArrived() {
  bool progressed = false;
  for (int p = 0; p < context_.group.size(); ++p) {
    const Segments& theirs = plan_.chunk(p);
    size_t& k = decoded_[size_t(p)];
    while (p != me_ && k < theirs.size() && phase_.done(inbox_[size_t(p)][k])) {
      if (context_.usageError.empty()) plan_.decode(p, k);
      ++k;
      progressed = true;
    }
  }
  return progressed;
}

bool GatherSegments::decodedAll() const {
  for (int p = 0; p < context_.group.size(); ++p) {
    if (p != me_ && decoded_[size_t(p)] < plan_.chunk(p).size()) return false;
  }
  return true;
}

}  // namespace qccl::coll
