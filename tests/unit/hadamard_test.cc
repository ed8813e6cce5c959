// The randomized Hadamard transform against an explicit Sylvester matrix in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "codecs/cpu/hadamard_vec.h"
#include "codecs/element/hadamard.h"

namespace qccl {
namespace {

// Sylvester construction: H[i][j] = (-1)^popcount(i & j).
double sylvester(int i, int j) { return __builtin_popcount(unsigned(i & j)) % 2 ? -1.0 : 1.0; }

class Rht : public ::testing::TestWithParam<int> {};

TEST_P(Rht, MatchesExplicitMatrixAndInverts) {
  const int r = GetParam();
  const RhtSigns signs = rhtSigns(99);
  std::mt19937 rng(r);
  std::normal_distribution<float> normal;
  std::vector<float> x(r), y(r);
  for (float& v : x) v = normal(rng);
  y = x;
  rhtForward(y.data(), r, signs);
  for (int i = 0; i < r; ++i) {
    double want = 0;
    for (int j = 0; j < r; ++j) {
      const double s = (signs.words[j / 32] >> (j % 32)) & 1 ? -1.0 : 1.0;
      want += sylvester(i, j) * s * x[j];
    }
    want /= std::sqrt(double(r));
    ASSERT_NEAR(y[i], want, 1e-5) << "R=" << r << " i=" << i;
  }
  rhtInverse(y.data(), r, signs);
  for (int i = 0; i < r; ++i) ASSERT_NEAR(y[i], x[i], 1e-5) << "R=" << r << " i=" << i;
}

// The kernels' prepared rotation (sign masks, the norm computed once) over a tile of several
// runs gives rhtForward's and rhtInverse's bits run by run. This file is compiled for the
// baseline target, where that is the scalar path; tests/unit/kernel_targets_test.cc compares the
// AVX2 and AVX-512 kernels, whose runs stay in vector registers, with the portable ones.
TEST_P(Rht, TileRotationMatchesTheDefinition) {
  const int r = GetParam();
  const RhtSigns signs = rhtSigns(7);
  const RhtRuns runs = rhtRuns(r, 7);
  std::mt19937 rng(r + 2);
  std::normal_distribution<float> normal;
  std::vector<float> x(3 * size_t(r));
  for (float& v : x) v = normal(rng);
  for (const bool forward : {true, false}) {
    std::vector<float> want = x, got = x;
    for (size_t i = 0; i < x.size(); i += size_t(r)) {
      if (forward) {
        rhtForward(want.data() + i, r, signs);
      } else {
        rhtInverse(want.data() + i, r, signs);
      }
    }
    rotateTile(got.data(), got.size(), runs, forward);
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), sizeof(float) * x.size())) << forward;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Rht, ::testing::Values(16, 32, 64, 128, 256));

TEST(RhtSigns, DeterministicPerSeedAndBalanced) {
  const RhtSigns a = rhtSigns(1), b = rhtSigns(1), c = rhtSigns(2);
  int negatives = 0, differ = 0;
  for (int w = 0; w < kRhtSignWords; ++w) {
    EXPECT_EQ(a.words[w], b.words[w]);
    negatives += __builtin_popcount(a.words[w]);
    differ += __builtin_popcount(a.words[w] ^ c.words[w]);
  }
  // 256 fair coin flips: 128 +- 4 sigma.
  EXPECT_NEAR(negatives, 128, 32);
  EXPECT_NEAR(differ, 128, 32);
}

TEST(RhtNorm, NearestFloatToInverseSqrt) {
  for (int r : {16, 32, 64, 128, 256}) {
    EXPECT_EQ(rhtNorm(r), float(1.0 / std::sqrt(double(r)))) << r;
  }
}

}  // namespace
}  // namespace qccl
