// The compressed reduce-scatter stage, pipelined (docs/ALGORITHMS.md), shared by reduce-scatter
// and the sra allreduce: chunk spans[p] of every rank's vector is encoded segment by segment
// (worker error feedback) and sent to rank p; this rank adds the contributions to its own chunk
// in fp32 and rank order (its own in full precision) one segment at a time, as soon as all of that
// segment's contributions have arrived.
#pragma once

#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/pipeline.h"

namespace qccl::coll {

class ScatterReduce {
 public:
  struct Reduced {
    size_t index;         // segment of this rank's chunk
    Span span;            // its elements in the call's vector
    const float* values;  // the sum (Avg applied); valid until the ScatterReduce goes
    bool ok;  // false: a contribution was poison or did not match (recorded in the context)
  };

  // Posts every receive. args.count: the whole vector; spans: each rank's chunk of it.
  ScatterReduce(Context& context, const ReduceArgs& args, std::vector<Span> spans);

  // Encodes and sends the next segment due to a peer; false once all are sent. Segments go out in
  // segment order, each round starting at the next rank, so the ranks do not all feed one peer.
  bool sendNext();
  // Tests the messages; true when any completed.
  bool poll() { return phase_.poll(); }
  // The next segment of this rank's chunk, reduced, once all its contributions are in.
  bool reduceNext(Reduced& reduced);
  bool reducedAll() const { return nextReduce_ == segments_[size_t(me_)].size(); }
  // Waits for the sends to complete.
  void wait() { phase_.wait(); }
  std::string awaited() const { return phase_.awaited(); }

 private:
  Context& context_;
  ReduceArgs args_;
  int me_;
  std::vector<Segments> segments_;  // of each rank's chunk
  Phase phase_;
  std::vector<std::vector<Phase::Handle>> inbox_;  // [peer][segment of this rank's chunk]
  size_t sendRound_ = 0;                           // the segment being sent
  int sendOffset_ = 1;                             // to rank me + offset
  size_t nextReduce_ = 0;
  float* sums_;  // this rank's chunk
  bool ok_ = true;
};

}  // namespace qccl::coll
