// The compressed allgather stage, pipelined (docs/ALGORITHMS.md), shared by allgather and the sra
// allreduce: every rank's chunk spans[p] of an encoded vector goes out from its owner segment by
// segment, and every other rank decodes each segment into its output as soon as it arrives.
#pragma once

#include <string>
#include <vector>

#include "collectives/pipeline.h"

namespace qccl::coll {

class GatherSegments {
 public:
  // Posts every receive. encodedType: the encoder's input dtype; out: the output vector, of
  // outType, that spans index.
  GatherSegments(Context& context, std::vector<Span> spans, qcclDataType_t encodedType, void* out,
                 qcclDataType_t outType);

  const Segments& own() const { return segments_[size_t(me_)]; }
  // Where this rank's segment k is to be encoded, and then its sending to every peer.
  uint8_t* ownSegment(size_t k);
  void share(size_t k);
  // Decodes this rank's own segment k into the output.
  void decodeOwn(size_t k);

  // Tests the messages; true when any completed.
  bool poll() { return phase_.poll(); }
  // Decodes, in order per peer, the segments that have arrived; true when it decoded any. Poison
  // or a mismatch is recorded in the context, and nothing is decoded after it.
  bool decodeArrived();
  bool decodedAll() const;
  // Waits for the sends to complete.
  void wait() { phase_.wait(); }
  std::string awaited() const { return phase_.awaited(); }

 private:
  void decode(const uint8_t* chunk, size_t bytes, Span s);

  Context& context_;
  int me_;
  std::vector<Segments> segments_;
  uint8_t* out_;
  qcclDataType_t outType_;
  Phase phase_;
  std::vector<std::vector<Phase::Handle>> inbox_;  // [peer][segment of the peer's chunk]
  std::vector<size_t> decoded_;                    // [peer]: segments decoded
};

}  // namespace qccl::coll
