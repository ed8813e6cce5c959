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
  coll::Residuals& forCall(uint64_t key, uint64_t signature, coll::Executor& executor);

  void reset(uint64_t key);  // 0: every key
  size_t stateBytes() const;
  // Throw Error(qcclInvalidArgument) for a short buffer; load also for a state saved by another
  // rank, communicator size or residual dtype. Device residuals are copied through host memory.
  void save(void* buffer, size_t bytes, int rank, int nranks) const;
  void load(const void* buffer, size_t bytes, int rank, int nranks);

 private:
  struct Entry {
    uint64_t signature = 0;
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

   private:
    Entry& entry_;
    qcclDataType_t dtype_;
  };

  size_t elementBytes() const { return residualType_ == qcclFloat32 ? 4 : 2; }
  // Moves an entry's slots into the memory of `executor`.
  void migrate(Entry& entry, coll::Executor& executor) const;

  qcclDataType_t residualType_;
  std::map<uint64_t, Entry> entries_;
  std::vector<CallResiduals> views_;  // the view handed out for the current call
};

}  // namespace qccl::ef
