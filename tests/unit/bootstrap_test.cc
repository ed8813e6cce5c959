// The bootstrap: SipHash against its published vectors, unique ids, and the exchange through the
// root, including ranks that do not hold the secret or disagree on the size.
#include <gtest/gtest.h>

#include <thread>

#include "src/bootstrap/exchange.h"
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

TEST(Exchange, RanksThatDisagreeAllFail) {
  const RootInfo root =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  const auto sizes = exchange(root, {{0, 2, secretOf(1)}, {1, 3, secretOf(1)}});
  for (const std::string& o : sizes)
    EXPECT_NE(o.find("disagree on the communicator size"), std::string::npos) << o;
  const RootInfo again =
      startRoot(resolveHost("127.0.0.1", 0), secretOf(1), std::chrono::seconds(10));
  const auto duplicates = exchange(again, {{0, 3, secretOf(1)}, {0, 3, secretOf(1)}});
  for (const std::string& o : duplicates) EXPECT_NE(o.find("claim rank 0"), std::string::npos) << o;
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
