// Where a buffer lives: without the CUDA driver in the process, everything is host memory (and
// asking creates no CUDA context).
#include "src/device/memory_kind.h"

#include <gtest/gtest.h>

#include <vector>

namespace qccl::device {
namespace {

TEST(Placement, HostMemoryAndNullAreHost) {
  std::vector<float> heap(16);
  float stack = 0;
  for (const void* p : {static_cast<const void*>(heap.data()), static_cast<const void*>(&stack),
                        static_cast<const void*>(nullptr)}) {
    const Placement where = placementOf(p);
    EXPECT_EQ(where.kind, coll::MemoryKind::Host);
    EXPECT_EQ(where.device, -1);
  }
}

}  // namespace
}  // namespace qccl::device
