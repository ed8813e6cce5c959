// The exact collectives' pipelined stages over a tagged transport (docs/ALGORITHMS.md, "Exact
// paths"): raw values move segment by segment straight out of the caller's input and into its
// output, with no header and no staging copy, so that the reduction of one segment and the
// sending of its result overlap the wire time of the next. It is the same reduction, in the same
// rank order, as the framed path's: only when bytes move differs, never their values.
//
// Segments carry no header, so a call checks first that all ranks make the same one
// (agreeOnCall); pipelining is for calls large enough that this one extra message latency is
// nothing beside their wire time.
#pragma once

#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/partition.h"
#include "collectives/phase.h"

namespace qccl::coll {

// Elements per segment when an exact call whose largest chunk has `chunk` elements of `width`
// bytes is pipelined, or 0 when it is not: it is when the chunk spans at least two segments of
// QCCL_SEGMENT_BYTES (segmentElements fp32 elements), the smallest chunk with anything to
// overlap. The cost model (src/comm/cost_model.cc) follows the same rule.
inline size_t exactSegmentStep(size_t chunk, size_t width, size_t segmentElements) {
  const size_t segmentBytes = segmentElements * sizeof(float);
  if (segmentElements == 0 || chunk * width <= segmentBytes) return 0;
  return segmentBytes < width ? 1 : segmentBytes / width;
}

// The reduce-scatter stage: segment k of chunk spans[p] of this rank's input goes to rank p;
// this rank's own chunk arrives from every peer, and each of its segments is reduced in rank
// order (reduction.h) into `out` as soon as all of its contributions are in.
class ExactScatterReduce {
 public:
  // args.count: the whole vector; spans: each rank's chunk of it; step: elements per segment.
  // out holds this rank's chunk from element outBase of the vector on. Posts every receive.
  ExactScatterReduce(Context& context, const ReduceArgs& args, std::vector<Span> spans, size_t step,
                     void* out, size_t outBase);

  // Posts every send: segment k of every chunk before segment k + 1 of any, each round starting
  // at the next rank, so the owners can start reducing early and no peer is fed by everyone.
  void sendAll();
  // Tests the messages; true when any completed.
  bool poll() { return phase_.poll(); }
  // Reduces the next segment of this rank's chunk once all its contributions are in: its index.
  bool reduceNext(size_t& index);
  bool reducedAll() const { return nextReduce_ == segments_[size_t(me_)].size(); }
  const std::vector<Span>& mine() const { return segments_[size_t(me_)]; }
  // Waits for the sends to complete.
  void wait() { phase_.wait(); }
  std::string awaited() const { return phase_.awaited(); }

 private:
  uint8_t* inbox(int p, size_t k);

  Context& context_;
  ReduceArgs args_;
  int me_;
  size_t width_;
  std::vector<std::vector<Span>> segments_;  // [rank][segment of its chunk]
  Phase phase_;
  std::vector<std::vector<Phase::Handle>> inbox_;  // [peer][segment of this rank's chunk]
  uint8_t* out_;
  size_t outBase_;
  size_t nextReduce_ = 0;
};

// The allgather stage: segment k of chunk spans[p] of `out` arrives from rank p, straight into
// place; this rank shares its own segments as they are ready.
//
// In place (out is also the scatter stage's input), a receive into a chunk may be posted while
// the same bytes are still being sent to its owner: the owner sends its result for a segment
// only after it has received all of that segment, so the bytes have left this rank before any
// arrive in their place.
class ExactGather {
 public:
  // Posts every receive.
  ExactGather(Context& context, std::vector<Span> spans, size_t step, qcclDataType_t dtype,
              void* out);
  const std::vector<Span>& mine() const { return segments_[size_t(me_)]; }
  // Sends this rank's segment k, whose values lie at `from`, to every peer.
  void share(size_t k, const void* from);
  bool poll() { return phase_.poll(); }
  // Waits for every send and receive to complete.
  void wait() { phase_.wait(); }
  std::string awaited() const { return phase_.awaited(); }

 private:
  Context& context_;
  int me_;
  size_t width_;
  std::vector<std::vector<Span>> segments_;  // [rank][segment of its chunk]
  Phase phase_;
};

}  // namespace qccl::coll
