// The communicator's error-feedback state: residuals per key (a call site), each with a worker
// slot (this rank's whole input) and a server slot (the chunk it reduces). A key's residuals are
// reset when the call behind it changes shape (count, dtype, codec, algorithm), and live in the
// memory of the executor that runs its calls (host, or the GPU for device buffers): a key met on
// another executor than last time (say, after a checkpoint was loaded) moves its residuals there.
// docs/ERROR_FEEDBACK.md documents the keys and the save format.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "collectives/context.h"
#include "collectives/executor.h"

namespace qccl::ef {

class EfStore {
 public:
  explicit EfStore(qcclDataType_t residualType) : residualType_(residualType) {}

  // The residuals of one call, in the memory of `executor`. signature: a hash of the call's shape.
  // derivedKey: the key was derived from the call's buffer address (no caller-given key). When
  // such a key is new, derived keys unused for more than twice the longest gap seen between two
  // calls on one key are dropped: their buffer has moved or gone (a live buffer is reduced every
  // step), which bounds the state when an allocator moves some buffers. (When it moves every
  // buffer at every step, no key is ever reused and nothing tells a moved buffer from one not
  // yet called again: keyCounts().made keeps growing; docs/ERROR_FEEDBACK.md.)
  coll::Residuals& forCall(uint64_t key, uint64_t signature, coll::Executor& executor,
                           bool derivedKey);

  struct KeyCounts {
    size_t live = 0;       // keys holding residuals now
    uint64_t made = 0;     // keys made since the communicator was (a steady run stops making them)
    uint64_t dropped = 0;  // derived keys dropped as moved or gone
  };
  KeyCounts keyCounts() const;

  // The call that took residuals from forCall completed. ownInput: its worker residuals hold
  // only this rank's error on its own input (not on partial sums of other ranks' inputs, as
  // ring's and hier's do), so a shrink or a grow may carry them. Until then a key is not carried:
  // a call that failed midway may have updated its residuals for messages that never went.
  void settle(bool ownInput);

  void reset(uint64_t key);  // 0: every key
  // A communicator made from another (qcclCommShrink, qcclCommGrow) starts from this rank's worker
  // residuals there: its own error on its whole input, which a change of the group leaves right.
  // The server residuals belonged to a chunk of a group that is gone: they start from zero, and so
  // does everything when the residual dtypes differ, and a key whose last call failed midway or
  // left partial-sum errors in its worker slot (settle).
  void inheritWorkers(const EfStore& parent);
  size_t stateBytes() const;
  // Throw Error(qcclInvalidArgument) for a short buffer; load also for a state saved by another
  // rank, communicator size or residual dtype. Device residuals are copied through host memory.
  void save(void* buffer, size_t bytes, int rank, int nranks) const;
  void load(const void* buffer, size_t bytes, int rank, int nranks);

 private:
  struct Entry {
    uint64_t signature = 0;
    uint64_t lastUse = 0;  // the store's call count at the entry's last call
    bool derivedKey = false;
    bool carriable = false;              // settle(true) after its last call; false from forCall
    coll::Executor* executor = nullptr;  // whose memory the slots are in
    size_t counts[2] = {0, 0};
    coll::Buffer slots[2] = {coll::Buffer(coll::hostAllocator()),
                             coll::Buffer(coll::hostAllocator())};
  };

  class CallResiduals : public coll::Residuals {
   public:
    CallResiduals(Entry& entry, qcclDataType_t dtype) : entry_(entry), dtype_(dtype) {}
    void* get(Slot slot, size_t count) override;
    qcclDataType_t dtype() const override { return dtype_; }
    Entry& entry() { return entry_; }

   private:
    Entry& entry_;
    qcclDataType_t dtype_;
  };

  size_t elementBytes() const { return residualType_ == qcclFloat32 ? 4 : 2; }
  void dropMovedKeys(uint64_t key);
  // Moves an entry's slots into the memory of `executor`.
  void migrate(Entry& entry, coll::Executor& executor) const;

  qcclDataType_t residualType_;
  std::map<uint64_t, Entry> entries_;
  uint64_t calls_ = 0;
  uint64_t longestReuseGap_ = 0;  // calls between two calls on one key, the most seen
  uint64_t made_ = 0;
  uint64_t dropped_ = 0;
  std::vector<CallResiduals> views_;  // the view handed out for the current call
};

}  // namespace qccl::ef
