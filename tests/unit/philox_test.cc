// Philox4x32-10 against the known-answer vectors published with Random123 (kat_vectors).
#include <gtest/gtest.h>

#include "codecs/element/philox.h"

namespace qccl {
namespace {

void expectBlock(PhiloxBlock ctr, uint32_t k0, uint32_t k1, PhiloxBlock want) {
  const PhiloxBlock got = philox4x32_10(ctr, k0, k1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], want.v[i]) << "word " << i;
}

TEST(Philox, KnownAnswers) {
  expectBlock({{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}});
  expectBlock({{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff, 0xffffffff,
              {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}});
  expectBlock({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0,
              {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}});
}

TEST(Philox, StochasticRoundingStreamLayout) {
  // Element i of a stream uses word i % 4 of the block at counter (i / 4, rank, call),
  // keyed by the seed's low and high words.
  const uint64_t seed = 0x0123456789abcdefull;
  const PhiloxBlock b = stochasticRoundingBlock(seed, 3, 9, 0x100000002ull);
  const PhiloxBlock want = philox4x32_10({{2, 1, 3, 9}}, 0x89abcdef, 0x01234567);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.v[i], want.v[i]);
}

}  // namespace
}  // namespace qccl
