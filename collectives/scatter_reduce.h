// The compressed reduce-scatter stage over a tagged transport, pipelined (docs/ALGORITHMS.md),
// shared by reduce-scatter and the sra allreduce: the segments of a ScatterPlan go out one at a
// time while earlier ones are on the wire, and this rank reduces each of its own segments as soon
// as all of that segment's contributions have arrived.
#pragma once

#include <string>
#include <vector>

#include "collectives/phase.h"
#include "collectives/scatter_plan.h"

namespace qccl::coll {

class ScatterReduce {
 public:
  struct Reduced {
    size_t index;  // segment of this rank's chunk
    Span span;
    const float* values;
    bool ok;
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
  bool reducedAll() const { return nextReduce_ == plan_.mine().size(); }
  // Waits for the sends to complete.
  void wait() { phase_.wait(); }
  std::string awaited() const { return phase_.awaited(); }

 private:
  Context& context_;
  int me_;
  ScatterPlan plan_;
  Phase phase_;
  std::vector<std::vector<Phase::Handle>> inbox_;  // [peer][segment of this rank's chunk]
  size_t sendRound_ = 0;                           // the segment being sent
  int sendOffset_ = 1;                             // to rank me + offset
  size_t nextReduce_ = 0;
};

}  // namespace qccl::coll
