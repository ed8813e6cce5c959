// The error-feedback store's keys: residuals kept per key across calls, and derived (address)
// keys whose buffer moved dropped once they sit unused for longer than any key's step.
#include "src/ef/ef_store.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/host_executor.h"
#include "src/common/error.h"

namespace qccl::ef {
namespace {

constexpr uint64_t kShape = 0x51, kOtherShape = 0x53;

// One call on `key`: writes a mark into its worker residual, returns the mark found there before.
float call(EfStore& store, uint64_t key, uint64_t shape, bool derived, float mark) {
  coll::Residuals& r = store.forCall(key, shape, coll::hostExecutor(), derived);
  float* worker = static_cast<float*>(r.get(coll::Residuals::kWorker, 4));
  const float before = worker[0];
  worker[0] = mark;
  return before;
}

TEST(EfStore, KeepsEachKeysResidualsAcrossCalls) {
  EfStore store(qcclFloat32);
  EXPECT_EQ(call(store, 1, kShape, true, 1.f), 0.f);
  EXPECT_EQ(call(store, 2, kShape, true, 2.f), 0.f);
  EXPECT_EQ(call(store, 1, kShape, true, 3.f), 1.f);
  EXPECT_EQ(call(store, 2, kShape, true, 4.f), 2.f);
  EXPECT_EQ(store.keyCounts().live, 2u);
  EXPECT_EQ(store.keyCounts().made, 2u);
  EXPECT_EQ(store.keyCounts().dropped, 0u);
}

TEST(EfStore, ASteadyLoopNeverDropsAKey) {
  EfStore store(qcclFloat32);
  for (int step = 0; step < 50; ++step) {
    for (uint64_t key = 1; key <= 6; ++key)
      call(store, key, key % 2 ? kShape : kOtherShape, true, 1);
  }
  EXPECT_EQ(store.keyCounts().live, 6u);
  EXPECT_EQ(store.keyCounts().made, 6u);
  EXPECT_EQ(store.keyCounts().dropped, 0u);
}

TEST(EfStore, MovedBuffersDropTheirOldKeysAndBoundTheState) {
  EfStore store(qcclFloat32);
  // Per step: two buffers that stay, two that an allocator moves to new addresses.
  uint64_t next = 100;
  for (int step = 0; step < 40; ++step) {
    call(store, 1, kShape, true, 1);
    call(store, next++, kShape, true, 1);
    call(store, 2, kOtherShape, true, 1);
    call(store, next++, kShape, true, 1);
  }
  const EfStore::KeyCounts keys = store.keyCounts();
  EXPECT_EQ(keys.made, 82u);
  EXPECT_LE(keys.live, 2u + 5u);  // the two that stay, the moving ones of the last two steps
  EXPECT_EQ(keys.dropped, keys.made - keys.live);
  EXPECT_EQ(call(store, 1, kShape, true, 0), 1.f);  // the ones that stay kept their residuals
  EXPECT_EQ(call(store, 2, kOtherShape, true, 0), 1.f);
}

TEST(EfStore, CallerKeysAreNeverDropped) {
  EfStore store(qcclFloat32);
  call(store, 1, kShape, false, 7.f);      // a caller's key, used once in a while
  call(store, 2, kOtherShape, true, 8.f);  // another shape, idle
  for (uint64_t key = 100; key < 200; ++key) call(store, key, kShape, true, 1);
  EXPECT_EQ(call(store, 1, kShape, false, 0.f), 7.f);
  EXPECT_EQ(call(store, 2, kOtherShape, true, 0.f), 8.f);
}

TEST(EfStore, LoadRefusesAStateWithAKeyTwiceAndKeepsItsOwn) {
  EfStore store(qcclFloat32);
  call(store, 7, kShape, false, 5.f);
  EfStore other(qcclFloat32);
  call(other, 9, kShape, false, 1.f);
  std::vector<uint8_t> state(other.stateBytes());
  other.save(state.data(), state.size(), 0, 1);
  // The one entry twice: the count field says two, the entry's bytes repeat.
  const size_t header = 4 + 4 * 4 + 8;
  std::vector<uint8_t> twice(state.begin(), state.end());
  twice.insert(twice.end(), state.begin() + header, state.end());
  const uint64_t two = 2;
  std::memcpy(twice.data() + header - 8, &two, 8);
  try {
    store.load(twice.data(), twice.size(), 0, 1);
    ADD_FAILURE() << "loaded a state with a key twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), qcclInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("key 9 twice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(call(store, 7, kShape, false, 6.f), 5.f);  // its own state is untouched
  store.load(state.data(), state.size(), 0, 1);        // the state itself loads
  EXPECT_EQ(call(store, 9, kShape, false, 2.f), 1.f);
}

}  // namespace
}  // namespace qccl::ef
