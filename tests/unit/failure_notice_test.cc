// Failure notices (collectives/context.h, kFailureNoticeTag): a waiting call stops for a notice of
// its own call or an earlier one, and goes on for a notice of a later call, which the
// communicator keeps for the call it is meant for.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "collectives/phase.h"
#include "src/common/error.h"
#include "src/transport/local_transport.h"

namespace qccl::coll {
namespace {

using transport::LocalTransport;

// A world of n local ranks, joined on threads (each constructor waits for the others).
std::vector<std::unique_ptr<LocalTransport>> localWorld(const char* key, int n) {
  std::vector<std::unique_ptr<LocalTransport>> world(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&world, key, r, n] {
      world[size_t(r)] =
          std::make_unique<LocalTransport>(key, r, n, Deadline::after(std::chrono::seconds(10)));
    });
  }
  for (std::thread& t : threads) t.join();
  return world;
}

void sendNotice(LocalTransport& from, int to, const uint64_t& sequence) {
  from.isend(to, kFailureNoticeTag, &sequence, sizeof sequence);
}

// Rank `me` waiting in call `sequence`: enough idle polls to look for notices several times.
// True when the wait stopped with qcclRemoteError.
bool waitStops(LocalTransport& transport, int n, int me, uint64_t sequence, FailureNotice& notice) {
  Context context;
  context.transport = &transport;
  for (int r = 0; r < n; ++r) context.group.ranks.push_back(r);
  context.group.me = me;
  context.notice = &notice;
  context.deadline = Deadline::after(std::chrono::seconds(10));
  context.sequence = sequence;
  Backoff backoff(context);
  try {
    for (int i = 0; i < 64; ++i) backoff.idle([] { return std::string("nothing"); });
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), qcclRemoteError) << e.what();
    return true;
  }
  return false;
}

TEST(FailureNotice, ALaterCallsNoticeWaitsForThatCall) {
  auto world = localWorld("failure-notice-later", 2);
  const uint64_t gaveUp = 5;
  sendNotice(*world[0], 1, gaveUp);
  FailureNotice notice;
  EXPECT_FALSE(waitStops(*world[1], 2, 1, 4, notice));  // call 4 finishes: rank 0 finished it
  EXPECT_EQ(notice.from, 0);
  EXPECT_EQ(notice.sequence, 5u);
  EXPECT_TRUE(waitStops(*world[1], 2, 1, 5, notice));  // the notice taken in call 4 stops 5
  EXPECT_TRUE(waitStops(*world[1], 2, 1, 6, notice));
}

TEST(FailureNotice, TheEarliestCallGivenUpCounts) {
  auto world = localWorld("failure-notice-earliest", 3);
  const uint64_t late = 9, early = 3;
  sendNotice(*world[0], 2, late);
  sendNotice(*world[1], 2, early);
  FailureNotice notice;
  EXPECT_TRUE(waitStops(*world[2], 3, 2, 4, notice));  // rank 1 gave up call 3
  EXPECT_EQ(notice.from, 1);
  EXPECT_EQ(notice.sequence, 3u);
}

TEST(FailureNotice, NoNoticeNoStop) {
  auto world = localWorld("failure-notice-none", 2);
  FailureNotice notice;
  EXPECT_FALSE(waitStops(*world[1], 2, 1, 1, notice));
  EXPECT_EQ(notice.from, -1);
}

}  // namespace
}  // namespace qccl::coll
