// Point-to-point messages (qcclSend / qcclRecv, groups, qcclIsend / qcclIrecv with tags) and the
// rooted collectives (qcclReduce, qcclGather, qcclScatter) on ranks as threads: values, ordering,
// interleaving with collectives, and the errors of bad input.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

// Rank r's message to rank p: count values that say who sent them to whom.
std::vector<float> payload(int from, int to, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = float(from * 1000 + to) + float(i % 97) * 0.5f;
  return v;
}

TEST(PointToPoint, SendAndReceiveAlone) {
  runRanks(2, {}, [](int r, qcclComm_t comm) {
    for (size_t count : {size_t(0), size_t(1), size_t(1000)}) {
      if (r == 0) {
        const std::vector<float> out = payload(0, 1, count);
        RANK_EXPECT(qcclSend(out.data(), count, qcclFloat32, 1, comm, nullptr) == qcclSuccess, r,
                    qcclGetLastError(nullptr));
      } else {
        std::vector<float> in(count, -1.0f);
        RANK_EXPECT(qcclRecv(in.data(), count, qcclFloat32, 0, comm, nullptr) == qcclSuccess, r,
                    qcclGetLastError(nullptr));
        RANK_EXPECT(in == payload(0, 1, count), r, "count " << count);
      }
    }
  });
}

// Every rank sends to every rank (itself too) and receives from every rank in one group: without
// the group, the sends would wait for receives nobody has posted yet.
TEST(PointToPoint, AllToAllInOneGroup) {
  for (int n : {2, 3, 5}) {
    runRanks(n, {}, [n](int r, qcclComm_t comm) {
      const size_t count = 300000;  // larger than eager messages
      std::vector<std::vector<float>> out(static_cast<size_t>(n)), in(static_cast<size_t>(n));
      qcclGroupStart();
      for (int p = 0; p < n; ++p) {
        out[size_t(p)] = payload(r, p, count);
        in[size_t(p)].assign(count, -1.0f);
        qcclSend(out[size_t(p)].data(), count, qcclFloat32, p, comm, nullptr);
        qcclRecv(in[size_t(p)].data(), count, qcclFloat32, p, comm, nullptr);
      }
      RANK_EXPECT(qcclGroupEnd() == qcclSuccess, r, qcclGetLastError(nullptr));
      for (int p = 0; p < n; ++p)
        RANK_EXPECT(in[size_t(p)] == payload(p, r, count), r, "from " << p);
      // The collective sequence was not consumed: an allreduce still agrees.
      float x = float(r), sum = 0;
      RANK_EXPECT(qcclAllReduce(&x, &sum, 1, qcclFloat32, qcclSum, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
      RANK_EXPECT(sum == float(n * (n - 1) / 2), r, "sum " << sum);
    });
  }
}

TEST(PointToPoint, TagsMatchOutOfOrderAndMessagesInterleaveWithCollectives) {
  runRanks(3, {}, [](int r, qcclComm_t comm) {
    const size_t count = 5000;
    if (r == 0) {
      // Two messages under two tags, then an allreduce while the receiver has not taken them.
      const std::vector<float> a = payload(0, 5, count), b = payload(0, 7, count);
      qcclRequest_t ra = nullptr, rb = nullptr;
      RANK_EXPECT(qcclIsend(a.data(), count, qcclFloat32, 1, 5, comm, &ra) == qcclSuccess, r, "");
      RANK_EXPECT(qcclIsend(b.data(), count, qcclFloat32, 1, 7, comm, &rb) == qcclSuccess, r, "");
      float x = 1, y = 0;
      RANK_EXPECT(qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
      RANK_EXPECT(qcclWait(ra) == qcclSuccess && qcclWait(rb) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
    } else if (r == 1) {
      float x = 1, y = 0;
      RANK_EXPECT(qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
      std::vector<float> seven(count), five(count);
      qcclRequest_t r7 = nullptr, r5 = nullptr;
      RANK_EXPECT(qcclIrecv(seven.data(), count, qcclFloat32, 0, 7, comm, &r7) == qcclSuccess, r,
                  "");
      RANK_EXPECT(qcclIrecv(five.data(), count, qcclFloat32, 0, 5, comm, &r5) == qcclSuccess, r,
                  "");
      int done = 0;
      while (done == 0) {
        RANK_EXPECT(qcclTest(r7, &done) == qcclSuccess, r, qcclGetLastError(nullptr));
      }
      RANK_EXPECT(qcclWait(r5) == qcclSuccess, r, qcclGetLastError(nullptr));
      RANK_EXPECT(seven == payload(0, 7, count) && five == payload(0, 5, count), r, "tags mixed");
    } else {
      float x = 1, y = 0;
      RANK_EXPECT(qcclAllReduce(&x, &y, 1, qcclFloat32, qcclSum, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
    }
  });
}

TEST(PointToPoint, MismatchedMessagesAreRefusedBufferUntouched) {
  runRanks(2, {}, [](int r, qcclComm_t comm) {
    const std::vector<float> out(64, 3.0f);
    if (r == 0) {
      qcclSend(out.data(), 64, qcclFloat32, 1, comm, nullptr);  // taken as bf16 x 128
      qcclSend(out.data(), 64, qcclFloat32, 1, comm, nullptr);  // taken as 32 floats
    } else {
      std::vector<uint16_t> asBf16(128, 7);
      RANK_EXPECT(qcclRecv(asBf16.data(), 128, qcclBfloat16, 0, comm, nullptr) == qcclInvalidUsage,
                  r, "dtype mismatch accepted");
      RANK_EXPECT(std::string(qcclGetLastError(nullptr)).find("dtype") != std::string::npos, r,
                  qcclGetLastError(nullptr));
      RANK_EXPECT(asBf16 == std::vector<uint16_t>(128, 7), r, "written");
      std::vector<float> short32(32, 7.0f);
      RANK_EXPECT(qcclRecv(short32.data(), 32, qcclFloat32, 0, comm, nullptr) == qcclInvalidUsage,
                  r, "count mismatch accepted");
      RANK_EXPECT(short32 == std::vector<float>(32, 7.0f), r, "written");
    }
  });
}

TEST(PointToPoint, BadArguments) {
  runRanks(2, {}, [](int r, qcclComm_t comm) {
    if (r != 0) return;
    float x = 0;
    qcclRequest_t req = nullptr;
    RANK_EXPECT(qcclSend(&x, 1, qcclFloat32, 2, comm, nullptr) == qcclInvalidArgument, r, "peer");
    RANK_EXPECT(qcclSend(&x, 1, qcclFloat32, -1, comm, nullptr) == qcclInvalidArgument, r, "peer");
    RANK_EXPECT(qcclIsend(&x, 1, qcclFloat32, 1, 1u << 24, comm, &req) == qcclInvalidArgument, r,
                "tag");
    RANK_EXPECT(req == nullptr, r, "request set on failure");
    RANK_EXPECT(qcclIsend(&x, 1, qcclFloat32, 1, 0, comm, nullptr) == qcclInvalidArgument, r,
                "null request");
    RANK_EXPECT(qcclSend(nullptr, 1, qcclFloat32, 1, comm, nullptr) == qcclInvalidArgument, r,
                "null buffer");
    RANK_EXPECT(qcclSend(&x, 1, qcclFloat32, 1, comm, reinterpret_cast<cudaStream_t>(1)) ==
                    qcclInvalidUsage,
                r, "stream");
    RANK_EXPECT(qcclGroupEnd() == qcclInvalidUsage, r, "group end without start");
    RANK_EXPECT(qcclTest(nullptr, nullptr) == qcclInvalidArgument, r, "null test");
  });
}

TEST(PointToPoint, ACancelledReceiveIsGoneAndTheNextOneWorks) {
  runRanks(2, {}, [](int r, qcclComm_t comm) {
    float x = float(r), y = -1;
    if (r == 1) {
      qcclRequest_t req = nullptr;
      RANK_EXPECT(qcclIrecv(&y, 1, qcclFloat32, 0, 9, comm, &req) == qcclSuccess, r, "");
      RANK_EXPECT(qcclCancel(req) == qcclSuccess, r, qcclGetLastError(nullptr));
      RANK_EXPECT(qcclRecv(&y, 1, qcclFloat32, 0, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
      RANK_EXPECT(y == 0.0f, r, "received " << y);
    } else {
      RANK_EXPECT(qcclSend(&x, 1, qcclFloat32, 1, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
    }
  });
}

// Every other rank sends to rank 0 under one tag, the last rank twice. Rank 0's receive from the
// last rank, posted first, takes that rank's first message; its receives from any source then take
// one message each and name its sender.
TEST(PointToPoint, ReceivesFromAnySourceNameTheirSenders) {
  const int n = 4;
  const size_t count = 3000;
  runRanks(n, {}, [](int r, qcclComm_t comm) {
    if (r != 0) {
      const std::vector<float> first = payload(r, 0, count), second = payload(r + 10, 0, count);
      RANK_EXPECT(qcclSend(first.data(), count, qcclFloat32, 0, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
      if (r == n - 1) {
        RANK_EXPECT(qcclSend(second.data(), count, qcclFloat32, 0, comm, nullptr) == qcclSuccess, r,
                    qcclGetLastError(nullptr));
      }
      return;
    }
    std::vector<float> named(count, -1.0f);
    qcclRequest_t namedReq = nullptr;
    RANK_EXPECT(
        qcclIrecv(named.data(), count, qcclFloat32, n - 1, 0, comm, &namedReq) == qcclSuccess, r,
        qcclGetLastError(nullptr));
    std::vector<std::vector<float>> in(n - 1, std::vector<float>(count, -1.0f));
    std::vector<int> source(n - 1, -2);
    std::vector<qcclRequest_t> req(n - 1);
    for (int k = 0; k < n - 1; ++k) {
      RANK_EXPECT(qcclIrecvAnySource(in[size_t(k)].data(), count, qcclFloat32, 0, comm,
                                     &source[size_t(k)], &req[size_t(k)]) == qcclSuccess,
                  r, qcclGetLastError(nullptr));
    }
    for (int k = n - 2; k >= 0; --k) {  // tested newest first: still bound oldest first
      RANK_EXPECT(qcclWait(req[size_t(k)]) == qcclSuccess, r, qcclGetLastError(nullptr));
    }
    RANK_EXPECT(qcclWait(namedReq) == qcclSuccess, r, qcclGetLastError(nullptr));
    RANK_EXPECT(named == payload(n - 1, 0, count), r, "the named receive's message");
    std::vector<bool> heard(n, false);
    for (int k = 0; k < n - 1; ++k) {
      const int s = source[size_t(k)];
      RANK_EXPECT(s >= 1 && s < n && !heard[size_t(s)], r, "source " << s);
      if (s < 1 || s >= n) continue;
      heard[size_t(s)] = true;
      const int sender = s == n - 1 ? s + 10 : s;
      RANK_EXPECT(in[size_t(k)] == payload(sender, 0, count), r, "message " << k << " from " << s);
    }
  });
}

TEST(PointToPoint, AReceiveFromAnySourceWaitsForItsTagAndCanBeCancelled) {
  CommOptions options;
  options.timeoutMs = 300;
  runRanks(2, options, [](int r, qcclComm_t comm) {
    float x = float(r + 1), y = -1;
    int source = -2;
    if (r == 0) {
      RANK_EXPECT(qcclSend(&x, 1, qcclFloat32, 1, comm, nullptr) == qcclSuccess, r,
                  qcclGetLastError(nullptr));
      return;
    }
    qcclRequest_t other = nullptr, req = nullptr;
    // Tag 5: nobody sends it. Cancelled, it leaves nothing behind.
    RANK_EXPECT(qcclIrecvAnySource(&y, 1, qcclFloat32, 5, comm, &source, &other) == qcclSuccess, r,
                qcclGetLastError(nullptr));
    RANK_EXPECT(qcclIrecvAnySource(&y, 1, qcclFloat32, 0, comm, &source, &req) == qcclSuccess, r,
                qcclGetLastError(nullptr));
    RANK_EXPECT(qcclWait(req) == qcclSuccess, r, qcclGetLastError(nullptr));
    RANK_EXPECT(y == 1.0f && source == 0, r, "received " << y << " from " << source);
    int done = 1;
    RANK_EXPECT(qcclTest(other, &done) == qcclSuccess && done == 0, r, "tag 5 completed");
    RANK_EXPECT(qcclCancel(other) == qcclSuccess, r, qcclGetLastError(nullptr));
    // Nothing arrives under tag 5: a wait times out.
    RANK_EXPECT(qcclIrecvAnySource(&y, 1, qcclFloat32, 5, comm, nullptr, &other) == qcclSuccess, r,
                qcclGetLastError(nullptr));
    RANK_EXPECT(qcclWait(other) == qcclTimeout, r, qcclGetLastError(nullptr));
    RANK_EXPECT(y == 1.0f, r, "buffer written: " << y);
  });
}

TEST(PointToPoint, AReceiveNobodyAnswersTimesOut) {
  CommOptions options;
  options.timeoutMs = 300;
  runRanks(2, options, [](int r, qcclComm_t comm) {
    if (r == 0) {  // stays, silent, until rank 1 gave up
      std::this_thread::sleep_for(std::chrono::seconds(1));
      return;
    }
    float x = 0;
    const auto start = std::chrono::steady_clock::now();
    RANK_EXPECT(qcclRecv(&x, 1, qcclFloat32, 0, comm, nullptr) == qcclTimeout, r,
                qcclGetLastError(nullptr));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RANK_EXPECT(seconds < 5.0, r, "waited " << seconds << " s");
  });
}

TEST(RootedCollectives, GatherScatterReduceAtEveryRoot) {
  for (int n : {1, 2, 3, 4}) {
    runRanks(n, {}, [n](int r, qcclComm_t comm) {
      const size_t count = 1001;
      for (int root = 0; root < n; ++root) {
        const std::vector<float> mine = payload(r, root, count);
        std::vector<float> all(size_t(n) * count, -1.0f);
        RANK_EXPECT(qcclGather(mine.data(), all.data(), count, qcclFloat32, root, comm, nullptr) ==
                        qcclSuccess,
                    r, qcclGetLastError(nullptr));
        if (r == root) {
          for (int p = 0; p < n; ++p) {
            RANK_EXPECT(std::equal(all.begin() + long(size_t(p) * count),
                                   all.begin() + long(size_t(p + 1) * count),
                                   payload(p, root, count).begin()),
                        r, "gather block " << p);
          }
        } else {
          RANK_EXPECT(all == std::vector<float>(size_t(n) * count, -1.0f), r, "recvbuff written");
        }
        // Scatter back what was gathered: every rank gets its block.
        std::vector<float> back(count, -1.0f);
        RANK_EXPECT(qcclScatter(all.data(), back.data(), count, qcclFloat32, root, comm, nullptr) ==
                        qcclSuccess,
                    r, qcclGetLastError(nullptr));
        RANK_EXPECT(back == mine, r, "scatter from root " << root);
        // Reduce of small integers (exact in any order); recvbuff is written at the root only.
        std::vector<int32_t> v(count), sum(count, -7);
        std::iota(v.begin(), v.end(), r);
        RANK_EXPECT(qcclReduce(v.data(), sum.data(), count, qcclInt32, qcclSum, root, comm,
                               nullptr) == qcclSuccess,
                    r, qcclGetLastError(nullptr));
        for (size_t i = 0; i < count; ++i) {
          const int32_t want = r == root ? int32_t(n * int(i) + n * (n - 1) / 2) : -7;
          if (sum[i] != want) {
            RANK_EXPECT(false, r, "reduce element " << i << " = " << sum[i] << ", want " << want);
            break;
          }
        }
      }
      float x = 0;
      RANK_EXPECT(qcclGather(&x, &x, 1, qcclFloat32, n, comm, nullptr) == qcclInvalidArgument, r,
                  "root out of range");
      RANK_EXPECT(
          qcclReduce(&x, &x, 1, qcclFloat32, qcclSum, -1, comm, nullptr) == qcclInvalidArgument, r,
          "root out of range");
    });
  }
}

}  // namespace
}  // namespace qccl::test
