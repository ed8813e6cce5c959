#include "collectives/scatter_reduce.h"

#include <algorithm>

#include "collectives/chunk_codec.h"
#include "collectives/reduction.h"

namespace qccl::coll {

ScatterReduce::ScatterReduce(Context& context, const ReduceArgs& args, std::vector<Span> spans)
    : context_(context), args_(args), me_(context.group.me), phase_(context) {
  const int n = context.group.size();
  for (const Span& s : spans) segments_.emplace_back(context, s, args.dtype);
  const Segments& mine = segments_[size_t(me_)];
  Workspace& ws = *context.workspace;
  inbox_.resize(size_t(n));
  for (int p = 0; p < n; ++p) {
    if (p == me_) continue;
    Buffer& in = ws.buffer(Slot::ScatterIn, size_t(p));
    in.resize(mine.totalBytes());
    for (size_t k = 0; k < mine.size(); ++k) {
      inbox_[size_t(p)].push_back(phase_.recv(p, in.data() + mine.offset(k), mine.bytes(k)));
    }
    ws.buffer(Slot::ScatterOut, size_t(p)).resize(segments_[size_t(p)].totalBytes());
  }
  sums_ = ws.floats(Slot::ScatterSums, spans[size_t(me_)].size());
}

bool ScatterReduce::sendNext() {
  const int n = context_.group.size();
  size_t rounds = 0;
  for (const Segments& s : segments_) rounds = std::max(rounds, s.size());
  for (; sendRound_ < rounds; ++sendRound_, sendOffset_ = 1) {
    for (; sendOffset_ < n; ++sendOffset_) {
      const int p = (me_ + sendOffset_) % n;
      const Segments& theirs = segments_[size_t(p)];
      const size_t k = sendRound_;
      if (k >= theirs.size()) continue;
      const Span s = theirs.span(k);
      uint8_t* out =
          context_.workspace->buffer(Slot::ScatterOut, size_t(p)).data() + theirs.offset(k);
      const auto* send = static_cast<const uint8_t*>(args_.send);
      encodeChunk(context_, send + s.begin * dataTypeSize(args_.dtype), s.size(), args_.dtype,
                  {Residuals::kWorker, args_.count, s.begin}, s.begin, out, theirs.bytes(k));
      phase_.send(p, out, theirs.bytes(k));
      ++sendOffset_;
      return true;
    }
  }
  return false;
}

bool ScatterReduce::reduceNext(Reduced& reduced) {
  const int n = context_.group.size();
  const Segments& mine = segments_[size_t(me_)];
  const size_t k = nextReduce_;
  if (k == mine.size()) return false;
  for (int p = 0; p < n; ++p) {
    if (p != me_ && !phase_.done(inbox_[size_t(p)][k])) return false;
  }
  const Span s = mine.span(k);
  float* sums = sums_ + (s.begin - mine.span(0).begin);
  Executor& exec = *context_.executor;
  exec.zero(sums, s.size() * sizeof(float));
  ok_ = ok_ && context_.usageError.empty();
  for (int p = 0; p < n; ++p) {
    if (p == me_) {
      const auto* send = static_cast<const uint8_t*>(args_.send);
      exec.addToFloat32(send + s.begin * dataTypeSize(args_.dtype), args_.dtype, s.size(), sums);
      continue;
    }
    const uint8_t* chunk =
        context_.workspace->buffer(Slot::ScatterIn, size_t(p)).data() + mine.offset(k);
    if (ok_ && acceptChunk(context_, chunk, mine.bytes(k), s.size(), p)) {
      decodeChunk(context_, chunk, mine.bytes(k), s.size(), qcclFloat32, sums, true);
    } else {
      ok_ = false;
    }
  }
  if (args_.op == qcclAvg) exec.divide(sums, s.size(), float(n));
  reduced = {k, s, sums, ok_};
  ++nextReduce_;
  return true;
}

}  // namespace qccl::coll
