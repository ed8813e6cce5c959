// Pipelining of the compressed collectives (docs/ALGORITHMS.md): a chunk is cut into segments of
// whole codec blocks, each encoded, sent, reduced and decoded on its own, so that a rank encodes
// segment k+1 while segment k is on the wire and decodes what has arrived while the rest is still
// coming. The encoding of a segment is that of the same elements in an unsegmented chunk, block
// for block (nvfp4's per-chunk scale aside, which is then per segment).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectives/context.h"
#include "collectives/partition.h"
#include "collectives/phase.h"

namespace qccl::coll {

// A chunk's segments and where each one's encoded bytes lie in a buffer that holds them all.
class Segments {
 public:
  // `whole` (elements) cut into segments of the context's segment size rounded down to whole
  // codec blocks (at least one block; 0: one segment); an empty chunk has no segments. dtype: the
  // encoder's input.
  Segments(const Context& context, Span whole, qcclDataType_t dtype);
  size_t size() const { return spans_.size(); }
  Span span(size_t k) const { return spans_[k]; }
  size_t offset(size_t k) const { return offsets_[k]; }
  size_t bytes(size_t k) const { return offsets_[k + 1] - offsets_[k]; }
  size_t totalBytes() const { return offsets_.back(); }

 private:
  std::vector<Span> spans_;
  std::vector<size_t> offsets_;  // size() + 1 entries
};

// Elements per segment of a chunk of `count` elements: segmentElements rounded down to whole
// units (codec blocks; at least one unit); segmentElements 0: the whole chunk, unsegmented. The
// cost model (src/comm/cost_model.cc) counts segments by the same rule.
size_t segmentStep(size_t count, size_t segmentElements, size_t unit);

// Calls `step` (true when it did something) until `finished`, pacing the loop with a Backoff;
// `awaited` names the messages still pending for a timeout's message.
void runUntil(const Context& context, const std::function<bool()>& step,
              const std::function<bool()>& finished, const std::function<std::string()>& awaited);

}  // namespace qccl::coll
