// What the compressed allgather stage does (docs/ALGORITHMS.md), apart from when: every rank's
// chunk spans[p] of an encoded vector is cut into segments (pipeline.h); the owner encodes its own
// segments into one buffer, the others' arrive into theirs, and every rank decodes every segment,
// its own too, into the output. GatherSegments schedules this over a tagged transport, message by
// message; the stream schedule (stream_schedule.h) in a few batches. Both compute the same.
#pragma once

#include <vector>

#include "collectives/executor.h"
#include "collectives/pipeline.h"

namespace qccl::coll {

class GatherPlan {
 public:
  // encodedType: the encoder's input dtype; out: the output vector, of outType, that spans index;
  // accumulate: decodes are added to what out holds (in fp32, rounded once to outType).
  GatherPlan(Context& context, std::vector<Span> spans, qcclDataType_t encodedType, void* out,
             qcclDataType_t outType, bool accumulate = false);

  const Segments& chunk(int p) const { return segments_[size_t(p)]; }
  const Segments& own() const { return chunk(me_); }
  // Segment k of rank p's chunk: where the owner encodes it, where the others receive it.
  uint8_t* segment(int p, size_t k);
  // Decodes segment k of rank p's chunk into the output (a peer's only once accepted: poison or a
  // mismatch is recorded in the context instead).
  void decode(int p, size_t k);

 private:
  Context& context_;
  int me_;
  std::vector<Segments> segments_;
  qcclDataType_t encodedType_;
  uint8_t* out_;
  qcclDataType_t outType_;
  bool accumulate_;
};

}  // namespace qccl::coll
