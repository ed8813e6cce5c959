#include "collectives/gather_segments.h"

#include "collectives/chunk_codec.h"
#include "collectives/reduction.h"

namespace qccl::coll {

GatherSegments::GatherSegments(Context& context, std::vector<Span> spans,
                               qcclDataType_t encodedType, void* out, qcclDataType_t outType)
    : context_(context),
      me_(context.group.me),
      out_(static_cast<uint8_t*>(out)),
      outType_(outType),
      phase_(context) {
  const int n = context.group.size();
  for (const Span& s : spans) segments_.emplace_back(context, s, encodedType);
  Workspace& ws = *context.workspace;
  inbox_.resize(size_t(n));
  decoded_.assign(size_t(n), 0);
  for (int p = 0; p < n; ++p) {
    const Segments& theirs = segments_[size_t(p)];
    Buffer& in = ws.buffer(Slot::GatherIn, size_t(p));
    in.resize(theirs.totalBytes());
    if (p == me_) continue;  // the own buffer holds what this rank shares
    for (size_t k = 0; k < theirs.size(); ++k) {
      inbox_[size_t(p)].push_back(phase_.recv(p, in.data() + theirs.offset(k), theirs.bytes(k)));
    }
  }
}

uint8_t* GatherSegments::ownSegment(size_t k) {
  return context_.workspace->buffer(Slot::GatherIn, size_t(me_)).data() + own().offset(k);
}

void GatherSegments::share(size_t k) {
  for (int p = 0; p < context_.group.size(); ++p) {
    if (p != me_) phase_.send(p, ownSegment(k), own().bytes(k));
  }
}

void GatherSegments::decodeOwn(size_t k) { decode(ownSegment(k), own().bytes(k), own().span(k)); }

void GatherSegments::decode(const uint8_t* chunk, size_t bytes, Span s) {
  decodeChunk(context_, chunk, bytes, s.size(), outType_, out_ + s.begin * dataTypeSize(outType_),
              false);
}

bool GatherSegments::decodeArrived() {
  bool progressed = false;
  for (int p = 0; p < context_.group.size(); ++p) {
    const Segments& theirs = segments_[size_t(p)];
    size_t& k = decoded_[size_t(p)];
    while (p != me_ && k < theirs.size() && phase_.done(inbox_[size_t(p)][k])) {
      const uint8_t* chunk =
          context_.workspace->buffer(Slot::GatherIn, size_t(p)).data() + theirs.offset(k);
      if (context_.usageError.empty() &&
          acceptChunk(context_, chunk, theirs.bytes(k), theirs.span(k).size(), p)) {
        decode(chunk, theirs.bytes(k), theirs.span(k));
      }
      ++k;
      progressed = true;
    }
  }
  return progressed;
}

bool GatherSegments::decodedAll() const {
  for (int p = 0; p < context_.group.size(); ++p) {
    if (p != me_ && decoded_[size_t(p)] < segments_[size_t(p)].size()) return false;
  }
  return true;
}

}  // namespace qccl::coll
