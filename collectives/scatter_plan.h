// What the compressed reduce-scatter stage does (docs/ALGORITHMS.md), apart from when: chunk
// spans[p] of every rank's vector is cut into segments (pipeline.h), each encoded with worker
// error feedback into this rank's outbox for p; this rank's own chunk arrives from every peer into
// its inboxes, and each of its segments is reduced by adding the contributions in fp32 in rank
// order (its own in full precision) and applying Avg. ScatterReduce schedules this over a tagged
// transport, message by message as they arrive; scatterReduceInStreamOrder (stream_schedule.h) as
// a few batches in stream order. Both compute exactly the same.
#pragma once

#include <vector>

#include "collectives/collectives.h"
#include "collectives/executor.h"
#include "collectives/pipeline.h"

namespace qccl::coll {

class ScatterPlan {
 public:
  // args.count: the whole vector; spans: each rank's chunk of it. Sizes the workspace buffers.
  ScatterPlan(Context& context, const ReduceArgs& args, std::vector<Span> spans);

  const Segments& chunk(int p) const { return segments_[size_t(p)]; }
  const Segments& mine() const { return chunk(me_); }
  // The most segments any chunk has: segment k of every chunk goes out in round k.
  size_t rounds() const { return rounds_; }

  // Segment k of rank p's chunk of this rank's vector, encoded into the outbox for p.
  EncodeTask encodeTask(int p, size_t k);
  uint8_t* outbox(int p, size_t k);
  // Segment k of this rank's chunk as rank p sent it.
  uint8_t* inbox(int p, size_t k);

  struct Reduced {
    Span span;            // the segment's elements in the call's vector
    const float* values;  // the sum (Avg applied); valid until the plan goes
    bool ok;              // false: a contribution was poison or did not match (recorded)
  };
  // Reduces segment k of this rank's chunk from its inboxes; once one contribution failed, later
  // segments are not decoded either.
  Reduced reduce(size_t k);

 private:
  Context& context_;
  ReduceArgs args_;
  int me_;
  std::vector<Segments> segments_;  // of each rank's chunk
  size_t rounds_ = 0;
  float* sums_;  // this rank's chunk
  bool ok_ = true;
};

}  // namespace qccl::coll
