// Splitting a vector among the ranks of a group.
#pragma once

#include <cstddef>
#include <vector>

namespace qccl::coll {

struct Span {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};

// parts contiguous spans covering [0, count) in order, each starting at a multiple of unit
// (codec blocks stay whole); trailing spans may be short or empty.
std::vector<Span> partition(size_t count, int parts, size_t unit);

// parts spans of `each` elements, one after the other: the shares of reduce-scatter's input, the
// shards of allgather's output.
std::vector<Span> equalSpans(size_t each, int parts);

}  // namespace qccl::coll
