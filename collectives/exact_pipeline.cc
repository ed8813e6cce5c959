#include "collectives/exact_pipeline.h"

#include <algorithm>

#include "collectives/reduction.h"

namespace qccl::coll {

namespace {

// Each rank's chunk cut into segments of `step` elements; an empty chunk has none.
std::vector<std::vector<Span>> cutChunks(const std::vector<Span>& spans, size_t step) {
  std::vector<std::vector<Span>> segments(spans.size());
  for (size_t p = 0; p < spans.size(); ++p) {
    for (size_t begin = spans[p].begin; begin < spans[p].end; begin += step) {
      segments[p].push_back({begin, std::min(spans[p].end, begin + step)});
    }
  }
  return segments;
}

}  // namespace

ExactScatterReduce::ExactScatterReduce(Context& context, const ReduceArgs& args,
                                       std::vector<Span> spans, size_t step, void* out,
                                       size_t outBase)
    : context_(context),
      args_(args),
      me_(context.group.me),
      width_(dataTypeSize(args.dtype)),
      segments_(cutChunks(spans, step)),
      phase_(context),
      out_(static_cast<uint8_t*>(out)),
      outBase_(outBase) {
  const int n = context.group.size();
  const Span chunk = spans[size_t(me_)];
  inbox_.resize(size_t(n));
  for (int p = 0; p < n; ++p) {
    if (p == me_) continue;
    context.workspace->buffer(Slot::ExactIn, size_t(p)).resize(chunk.size() * width_);
    for (size_t k = 0; k < mine().size(); ++k) {
      inbox_[size_t(p)].push_back(phase_.recv(p, inbox(p, k), mine()[k].size() * width_));
    }
  }
}

uint8_t* ExactScatterReduce::inbox(int p, size_t k) {
  const size_t offset = (mine()[k].begin - mine()[0].begin) * width_;
  return context_.workspace->buffer(Slot::ExactIn, size_t(p)).data() + offset;
}

void ExactScatterReduce::sendAll() {
  const int n = context_.group.size();
  const auto* send = static_cast<const uint8_t*>(args_.send);
  size_t rounds = 0;
  for (const auto& chunk : segments_) rounds = std::max(rounds, chunk.size());
  for (size_t k = 0; k < rounds; ++k) {
    for (int offset = 1; offset < n; ++offset) {
      const int p = (me_ + offset) % n;
      if (k >= segments_[size_t(p)].size()) continue;
      const Span s = segments_[size_t(p)][k];
      phase_.send(p, send + s.begin * width_, s.size() * width_);
    }
  }
}

bool ExactScatterReduce::reduceNext(size_t& index) {
  const size_t k = nextReduce_;
  if (k == mine().size()) return false;
  for (int p = 0; p < context_.group.size(); ++p) {
    if (p != me_ && !phase_.done(inbox_[size_t(p)][k])) return false;
  }
  const Span s = mine()[k];
  const auto* send = static_cast<const uint8_t*>(args_.send);
  // In place, the output is this rank's own contribution: the accumulator reads all of them
  // before it writes.
  Accumulator acc(args_.dtype, args_.op, s.size(), context_.workspace->buffer(Slot::ExactSums, 0));
  for (int p = 0; p < context_.group.size(); ++p) {
    acc.add(p == me_ ? send + s.begin * width_ : inbox(p, k));
  }
  acc.finish(context_.group.size(), out_ + (s.begin - outBase_) * width_);
  index = k;
  ++nextReduce_;
  return true;
}

ExactGather::ExactGather(Context& context, std::vector<Span> spans, size_t step,
                         qcclDataType_t dtype, void* out)
    : context_(context),
      me_(context.group.me),
      width_(dataTypeSize(dtype)),
      segments_(cutChunks(spans, step)),
      phase_(context) {
  auto* bytes = static_cast<uint8_t*>(out);
  for (int p = 0; p < context.group.size(); ++p) {
    if (p == me_) continue;
    for (const Span& s : segments_[size_t(p)]) {
      phase_.recv(p, bytes + s.begin * width_, s.size() * width_);
    }
  }
}

void ExactGather::share(size_t k, const void* from) {
  const int n = context_.group.size();
  for (int offset = 1; offset < n; ++offset) {
    phase_.send((me_ + offset) % n, from, mine()[k].size() * width_);
  }
}

}  // namespace qccl::coll
