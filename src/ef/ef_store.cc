#include "src/ef/ef_store.h"

#include <cstring>

#include "collectives/host_executor.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl::ef {

namespace {
constexpr char kMagic[4] = {'Q', 'C', 'E', 'F'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 * 4 + 8;  // magic, version, nranks, rank, dtype, entries
constexpr size_t kEntryHeaderBytes = 4 * 8;     // key, signature, two counts

template <class T>
void put(uint8_t*& p, T v) {
  std::memcpy(p, &v, sizeof v);
  p += sizeof v;
}

template <class T>
T take(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}
}  // namespace

void* EfStore::CallResiduals::get(Slot slot, size_t count) {
  const size_t bytes = count * (dtype_ == qcclFloat32 ? 4 : 2);
  if (entry_.counts[slot] != count || entry_.slots[slot].size() != bytes) {
    entry_.counts[slot] = count;
    entry_.slots[slot].resize(bytes);
    entry_.executor->zero(entry_.slots[slot].data(), bytes);  // zero in fp32 and bf16 alike
  }
  return entry_.slots[slot].data();
}

coll::Residuals& EfStore::forCall(uint64_t key, uint64_t signature, coll::Executor& executor,
                                  bool derivedKey) {
  ++calls_;
  const bool made = entries_.count(key) == 0;
  Entry& entry = entries_[key];
  if (entry.signature != signature) {
    if (entry.signature != 0) {
      QCCL_INFO(kLogEf, "error feedback: key %llx changed shape, residuals reset",
                static_cast<unsigned long long>(key));
    }
    entry = Entry{};
    entry.signature = signature;
  }
  if (!made && entry.lastUse != 0 && calls_ - entry.lastUse > longestReuseGap_) {
    longestReuseGap_ = calls_ - entry.lastUse;
  }
  entry.lastUse = calls_;
  entry.derivedKey = derivedKey;
  if (made) {
    ++made_;
    if (derivedKey && longestReuseGap_ != 0) dropMovedKeys(key);
  }
  if (entry.executor != &executor) migrate(entry, executor);
  entry.carriable = false;
  views_.clear();
  views_.emplace_back(entry, residualType_);
  return views_.back();
}

void EfStore::dropMovedKeys(uint64_t key) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    const Entry& e = it->second;
    if (it->first != key && e.derivedKey && calls_ - e.lastUse > 2 * longestReuseGap_) {
      QCCL_INFO(kLogEf, "error feedback: key %llx unused for %llu calls, its buffer moved: dropped",
                static_cast<unsigned long long>(it->first),
                static_cast<unsigned long long>(calls_ - e.lastUse));
      it = entries_.erase(it);
      ++dropped_;
    } else {
      ++it;
    }
  }
}

EfStore::KeyCounts EfStore::keyCounts() const { return {entries_.size(), made_, dropped_}; }

void EfStore::migrate(Entry& entry, coll::Executor& executor) const {
  for (coll::Buffer& slot : entry.slots) {
    coll::Buffer moved(executor.allocator());
    moved.resize(slot.size());
    if (slot.size()) {
      if (entry.executor == nullptr || entry.executor->memory() == coll::MemoryKind::Host) {
        executor.fromHost(moved.data(), slot.data(), slot.size());
      } else {
        std::vector<uint8_t> staged(slot.size());
        entry.executor->toHost(staged.data(), slot.data(), slot.size());
        executor.fromHost(moved.data(), staged.data(), staged.size());
      }
    }
    slot = std::move(moved);
  }
  entry.executor = &executor;
}

void EfStore::reset(uint64_t key) {
  views_.clear();
  if (key == 0) {
    entries_.clear();
  } else {
    entries_.erase(key);
  }
}

void EfStore::settle(bool ownInput) {
  for (CallResiduals& view : views_) view.entry().carriable = ownInput;
}

void EfStore::inheritWorkers(const EfStore& parent) {
  if (parent.residualType_ != residualType_) return;
  views_.clear();
  entries_.clear();
  for (const auto& [key, from] : parent.entries_) {
    if (from.counts[0] == 0 || !from.carriable) continue;
    Entry& e = entries_[key];
    e.signature = from.signature;
    e.derivedKey = from.derivedKey;
    e.carriable = true;
    e.executor = &coll::hostExecutor();  // moved to the device by the key's next device call
    e.counts[0] = from.counts[0];
    e.slots[0].resize(from.slots[0].size());
    from.executor->toHost(e.slots[0].data(), from.slots[0].data(), from.slots[0].size());
  }
}

size_t EfStore::stateBytes() const {
  size_t bytes = kHeaderBytes;
  for (const auto& [key, e] : entries_) {
    bytes += kEntryHeaderBytes + e.slots[0].size() + e.slots[1].size();
  }
  return bytes;
}

void EfStore::save(void* buffer, size_t bytes, int rank, int nranks) const {
  if (buffer == nullptr || bytes < stateBytes()) {
    throwError(qcclInvalidArgument, "the error-feedback state needs %zu bytes (qcclEfStateSize)",
               stateBytes());
  }
  uint8_t* p = static_cast<uint8_t*>(buffer);
  std::memcpy(p, kMagic, 4);
  p += 4;
  put<uint32_t>(p, kVersion);
  put<uint32_t>(p, uint32_t(nranks));
  put<uint32_t>(p, uint32_t(rank));
  put<uint32_t>(p, uint32_t(residualType_));
  put<uint64_t>(p, entries_.size());
  for (const auto& [key, e] : entries_) {
    put<uint64_t>(p, key);
    put<uint64_t>(p, e.signature);
    put<uint64_t>(p, e.counts[0]);
    put<uint64_t>(p, e.counts[1]);
    for (const coll::Buffer& slot : e.slots) {
      if (slot.size()) e.executor->toHost(p, slot.data(), slot.size());
      p += slot.size();
    }
  }
}

void EfStore::load(const void* buffer, size_t bytes, int rank, int nranks) {
  if (buffer == nullptr || bytes < kHeaderBytes || std::memcmp(buffer, kMagic, 4) != 0) {
    throwError(qcclInvalidArgument, "not an error-feedback state saved by qcclEfStateSave");
  }
  const uint8_t* p = static_cast<const uint8_t*>(buffer) + 4;
  const uint8_t* end = static_cast<const uint8_t*>(buffer) + bytes;
  const uint32_t version = take<uint32_t>(p), savedRanks = take<uint32_t>(p),
                 savedRank = take<uint32_t>(p), savedType = take<uint32_t>(p);
  const uint64_t count = take<uint64_t>(p);
  if (version != kVersion || savedRanks != uint32_t(nranks) || savedRank != uint32_t(rank) ||
      savedType != uint32_t(residualType_)) {
    throwError(qcclInvalidArgument,
               "error-feedback state of rank %u of %u (version %u, dtype %u) cannot load into rank "
               "%d of %d (dtype %d)",
               savedRank, savedRanks, version, savedType, rank, nranks, int(residualType_));
  }
  std::map<uint64_t, Entry> loaded;
  for (uint64_t i = 0; i < count; ++i) {
    if (size_t(end - p) < kEntryHeaderBytes)
      throwError(qcclInvalidArgument, "error-feedback state is truncated");
    const uint64_t key = take<uint64_t>(p);
    if (loaded.count(key)) {  // qcclEfStateSave writes each key once: the state is corrupt
      throwError(qcclInvalidArgument, "error-feedback state holds key %llu twice",
                 static_cast<unsigned long long>(key));
    }
    Entry e;
    e.executor = &coll::hostExecutor();  // moved to the device by the key's next device call
    e.signature = take<uint64_t>(p);
    e.counts[0] = take<uint64_t>(p);
    e.counts[1] = take<uint64_t>(p);
    for (int s = 0; s < 2; ++s) {
      const size_t slotBytes = e.counts[s] * elementBytes();
      if (e.counts[s] > bytes || size_t(end - p) < slotBytes) {
        throwError(qcclInvalidArgument, "error-feedback state is truncated");
      }
      e.slots[s].resize(slotBytes);
      if (slotBytes) std::memcpy(e.slots[s].data(), p, slotBytes);
      p += slotBytes;
    }
    loaded[key] = std::move(e);
  }
  views_.clear();
  entries_ = std::move(loaded);  // only once all of it parsed: a bad buffer changes nothing
}

}  // namespace qccl::ef
