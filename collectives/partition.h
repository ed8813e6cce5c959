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

}  // namespace qccl::coll
