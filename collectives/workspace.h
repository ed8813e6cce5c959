// Memory the collectives reuse from call to call: a communicator owns one workspace per memory
// kind, so that in steady state a call allocates nothing and touches no fresh pages (first-touch
// page faults cost more than the codecs on large messages; a device allocation inside a CUDA
// graph capture is not allowed at all).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "collectives/memory.h"

namespace qccl::coll {

// Every use of a workspace buffer, so that nested algorithms never share one.
enum class Slot : uint8_t {
  AgreementIn,
  ScatterIn,
  ScatterOut,
  ScatterSums,
  GatherIn,
  GatherSums,
  DeltaChange,
  ExactIn,
  ExactOut,
  ExactResult,
  ExactSums,
  ExactPartial,
  ReduceScatterIn,
  ReduceScatterOut,
  AllgatherMine,
  AllgatherIn,
  AlltoallIn,
  AlltoallOut,
  BroadcastMessage,
  RootedIn,   // gather and scatter: the blocks that arrive
  RootedOut,  // ... and that leave
  HierIn,
  HierOut,
  HierValues,
  HierSlice,
  HierReduced,
  RingValues,
  RingOutgoing,
  RingIncoming,
  RingPartial,
  RingReduced,
  BarrierWord,
  StagedSend,
  StagedRecv,
};

class Workspace {
 public:
  explicit Workspace(Allocator& allocator = hostAllocator()) : allocator_(&allocator) {}
  MemoryKind kind() const { return allocator_->kind(); }
  // The buffer of (slot, index): index names the peer or segment where a slot has several.
  Buffer& buffer(Slot slot, size_t index) {
    return buffers_.try_emplace({slot, index}, *allocator_).first->second;
  }
  // count floats, contents unspecified.
  float* floats(Slot slot, size_t count) {
    Buffer& b = buffer(slot, ~size_t(0));
    b.resize(count * sizeof(float));
    return reinterpret_cast<float*>(b.data());
  }

 private:
  Allocator* allocator_;
  std::map<std::pair<Slot, size_t>, Buffer> buffers_;
};

}  // namespace qccl::coll
