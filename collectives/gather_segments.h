// The compressed allgather stage over a tagged transport, pipelined (docs/ALGORITHMS.md), shared
// by allgather and the sra allreduce: the owner shares each segment of a GatherPlan as soon as it
// is encoded, and every other rank decodes each segment as soon as it arrives.
#pragma once

#include <string>
#include <vector>

#include "collectives/gather_plan.h"
#include "collectives/phase.h"

namespace qccl::coll {

class GatherSegments {
 public:
  // Posts every receive (GatherPlan's arguments).
  GatherSegments(Context& context, std::vector<Span> spans, qcclDataType_t encodedType, void* out,
                 qcclDataType_t outType, bool accumulate = false);

  const Segments& own() const { return plan_.own(); }
  // Where this rank's segment k is to be encoded, and then its sending to every peer.
  uint8_t* ownSegment(size_t k) { return plan_.segment(me_, k); }
  void share(size_t k);
  // Decodes this rank's own segment k into the output.
  void decodeOwn(size_t k) { plan_.decode(me_, k); }

  // Tests the messages; true when any completed.
  bool poll() { return phase_.poll(); }
  // Decodes, in order per peer, the segments that have arrived; true when it decoded any. Nothing
  // is decoded after a disagreement was recorded.
  bool decodeArrived();
  bool decodedAll() const;
  // Waits for the sends to complete.
  void wait() { phase_.wait(); }
  std::string awaited() const { return phase_.awaited(); }

 private:
  Context& context_;
  int me_;
  GatherPlan plan_;
  Phase phase_;
  std::vector<std::vector<Phase::Handle>> inbox_;  // [peer][segment of the peer's chunk]
  std::vector<size_t> decoded_;                    // [peer]: segments decoded
};

}  // namespace qccl::coll
