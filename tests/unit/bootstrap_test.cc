// The bootstrap: SipHash against its published vectors, unique ids, and the exchange through the
// root, including ranks that do not hold the secret or disagree on the size.
#include <gtest/gtest.h>

#include <thread>

#include "src/bootstrap/exchange.h"
#include "src/bootstrap/handshake.h"
#include "src/bootstrap/unique_id.h"
#include "src/common/error.h"
#include "src/common/siphash.h"

namespace qccl::bootstrap {
namespace {

TEST(SipHash, ReferenceVectors) {
  // Aumasson and Bernstein's test vectors: key 00..0f, messages 00, 01, ... of length 0 and 15.
  uint8_t key[16], message[15];
  for (int i = 0; i < 16; ++i) key[i] = uint8_t(i);
  for (int i = 0; i < 15; ++i) message[i] = uint8_t(i);
  EXPECT_EQ(sipHash24(key, message, 0), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(sipHash24(key, message, 15), 0xa129ca6149be45e5ull);
}

TEST(UniqueId, RoundTripsAndRejectsGarbage) {
  RootInfo info;
  info.address = resolveHost("127.0.0.1", 4242);
  for (int i = 0; i < 16; ++i) info.secret[size_t(i)] = uint8_t(i * 17);
  const qcclUniqueId id = encodeUniqueId(info);
  const RootInfo back = decodeUniqueId(uniqueIdFromHex(uniqueIdToHex(id)));
  EXPECT_EQ(back.address.toString(), "127.0.0.1:4242");
  EXPECT_EQ(back.secret, info.secret);
  qcclUniqueId garbage = id;
  garbage.internal[0] = 'X';
  EXPECT_THROW(decodeUniqueId(garbage), Error);
  EXPECT_THROW(uniqueIdFromHex("abc"), Error);
  EXPECT_THROW(parseSecret("zz"), Error);
}

// Runs exchangeThroughRoot for each (rank, size, secret) on its own thread; returns the outcome
// per rank: the payload of the last rank it received, or the error.
std::vector<std::string> exchange(const RootInfo& root,
                                  const std::vector<std::tuple<int, int, Secret>>& ranks) {
  std::vector<std::string> outcome(ranks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i) {
    threads.emplace_back([&, i] {
      const auto& [rank, size, secret] = ranks[i];
      RootInfo mine = root;
      mine.secret = secret;
      try {
        const std::vector<std::string> all =
            exchangeThroughRoot(mine, rank, size, "payload of " + std::to_string(rank),
                                Deadline::after(std::chrono::seconds(5)));
        outcome[i] = "ok:" + all.back();
      } catch (const Error& e) {
        outcome[i] = "error " + std::to_string(int(e.code())) + ": " + e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return outcome;
}

Secret secretOf(uint8_t v) {
  Secret s;
  s.fill(v);
  return s;
}

TEST(Exchange, AllRanksGetEveryPayloadInRankOrder) {
  const RootInfo root =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  const auto outcome =
      exchange(root, {{2, 3, secretOf(1)}, {0, 3, secretOf(1)}, {1, 3, secretOf(1)}});
  for (const std::string& o : outcome) EXPECT_EQ(o, "ok:payload of 2");
}

TEST(Exchange, WrongSecretIsRefusedWhileTheOthersProceed) {
  const RootInfo root =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  // The impostor goes first: were it still queued when the real ranks complete the exchange, the
  // root's listener would close under it and it would see a reset instead of the refusal.
  const auto impostor = exchange(root, {{1, 2, secretOf(9)}});
  EXPECT_NE(impostor[0].find("error 6"), std::string::npos) << impostor[0];
  EXPECT_NE(impostor[0].find("refused"), std::string::npos) << impostor[0];
  const auto members = exchange(root, {{0, 2, secretOf(1)}, {1, 2, secretOf(1)}});
  for (const std::string& o : members) EXPECT_EQ(o, "ok:payload of 1");
}

TEST(Exchange, RanksThatDisagreeOnTheSizeAllFail) {
  const RootInfo root =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  const auto sizes = exchange(root, {{0, 2, secretOf(1)}, {1, 3, secretOf(1)}});
  for (const std::string& o : sizes)
    EXPECT_NE(o.find("disagree on the communicator size"), std::string::npos) << o;
}

// Connects to the root without the library's client, for the tests that misbehave; with
// greeted, after the root's hello and nonce have arrived.
Socket rawConnection(const RootInfo& root, bool greeted = false) {
  Socket s = connectWithin(root.address, Deadline::after(std::chrono::seconds(5)));
  if (greeted) {
    char hello[4 + sizeof(Nonce)];
    s.recvAll(hello, sizeof hello, Deadline::after(std::chrono::seconds(5)));
  }
  return s;
}

// A client that holds the secret and proves it, then sends header (rank, size, payload length)
// and whatever follows; returns the connection for the root's answer.
Socket provenConnection(const RootInfo& root) {
  const Deadline d = Deadline::after(std::chrono::seconds(5));
  Socket s = rawConnection(root);
  char hello[4];
  Nonce rootNonce, ours{};
  s.recvAll(hello, 4, d);
  s.recvAll(rootNonce.data(), rootNonce.size(), d);
  const uint64_t proof = handshakeMac(root.secret, "rank", rootNonce);
  s.sendAll(&proof, 8, d);
  s.sendAll(ours.data(), ours.size(), d);
  uint64_t answer = 0;
  s.recvAll(&answer, 8, d);
  EXPECT_EQ(answer, handshakeMac(root.secret, "root", ours));
  return s;
}

TEST(Exchange, ASecondClaimOfARankIsRefusedAndTheRanksStillForm) {
  const RootInfo root =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  // Rank 0 joins first (sent before the others connect, so the root reads it first).
  Socket first = provenConnection(root);
  const std::string payload = "payload of 0";
  const uint32_t header[3] = {0, 2, uint32_t(payload.size())};
  const Deadline d = Deadline::after(std::chrono::seconds(5));
  first.sendAll(header, sizeof header, d);
  first.sendAll(payload.data(), payload.size(), d);
  const auto again = exchange(root, {{0, 2, secretOf(1)}});
  EXPECT_NE(again[0].find("rank 0 has joined already"), std::string::npos) << again[0];
  const auto outOfRange = exchange(root, {{5, 2, secretOf(1)}});
  EXPECT_NE(outOfRange[0].find("rank 5 is out of range for size 2"), std::string::npos)
      << outOfRange[0];
  const auto last = exchange(root, {{1, 2, secretOf(1)}});
  EXPECT_EQ(last[0], "ok:payload of 1");
  EXPECT_EQ(recvU32(first, d), 0u);
  EXPECT_EQ(recvString(first, kMaxPayloadBytes, d), payload);
}

// Everything a hostile or broken client on the network can do to the root at once, while four
// ranks form their communicator: each is turned away with a logged reason and the ranks finish
// well inside their deadline (the root serves every connection from one poll loop).
TEST(Exchange, HostileClientsDoNotStopTheRanks) {
  ASSERT_NE(std::getenv("QCCL_DEBUG"), nullptr)
      << "run with QCCL_DEBUG=WARN (ctest sets it): this test reads the root's warnings";
  testing::internal::CaptureStderr();
  const RootInfo root =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  std::vector<Socket> held;
  for (int i = 0; i < 300; ++i) held.push_back(rawConnection(root));  // a flood that says nothing
  {
    Socket garbage = rawConnection(root, true);
    const std::string junk(200, '\x5a');
    garbage.sendAll(junk.data(), junk.size(), Deadline::after(std::chrono::seconds(1)));
    Socket truncated = rawConnection(root, true);
    truncated.sendAll("\x01\x02\x03", 3, Deadline::after(std::chrono::seconds(1)));
  }  // both close here
  Socket oversized = provenConnection(root);
  const uint32_t header[3] = {3, 4, 1u << 30};
  oversized.sendAll(header, sizeof header, Deadline::after(std::chrono::seconds(1)));
  const uint32_t status = recvU32(oversized, Deadline::after(std::chrono::seconds(5)));
  EXPECT_EQ(status, uint32_t(qcclInvalidUsage));
  EXPECT_NE(recvString(oversized, kMaxStatusTextBytes, Deadline::after(std::chrono::seconds(5)))
                .find("too big"),
            std::string::npos);
  const auto impostor = exchange(root, {{2, 4, secretOf(9)}});
  EXPECT_NE(impostor[0].find("refused"), std::string::npos) << impostor[0];

  const auto start = std::chrono::steady_clock::now();
  const auto outcome = exchange(
      root, {{3, 4, secretOf(1)}, {0, 4, secretOf(1)}, {2, 4, secretOf(1)}, {1, 4, secretOf(1)}});
  const auto took = std::chrono::steady_clock::now() - start;
  for (const std::string& o : outcome) EXPECT_EQ(o, "ok:payload of 3");
  EXPECT_LT(took, std::chrono::seconds(5));  // the ranks' own deadline in exchange()
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("too many connections in handshake"), std::string::npos) << log;
  EXPECT_NE(log.find("did not prove the unique id's secret"), std::string::npos) << log;
  EXPECT_NE(log.find("a payload of 1073741824 bytes"), std::string::npos) << log;
  EXPECT_NE(log.find("after 3 bytes of its proof"), std::string::npos) << log;
}

TEST(Exchange, NoRootIsATimeout) {
  RootInfo nobody;
  nobody.address = resolveHost("127.0.0.1", 1);  // nothing listens on port 1
  const auto start = std::chrono::steady_clock::now();
  try {
    exchangeThroughRoot(nobody, 0, 1, "", Deadline::after(std::chrono::milliseconds(300)));
    ADD_FAILURE() << "connected to nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), qcclTimeout) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace qccl::bootstrap
