// Allreduce on 1, 2, 3, 4 and 7 ranks (threads over the local transport): exact paths against an
// exact reference, compressed ones bitwise identical on every rank and within the bound that
// follows from the codec's (collective_reference.h), in-place and out-of-place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "codecs/codec.h"
#include "collectives/allreduce_impl.h"
#include "collectives/chunk_codec.h"
#include "collectives/exact_pipeline.h"
#include "src/common/siphash.h"
#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

struct Case {
  std::string codec;
  std::string algorithm;
  int ranks;
  size_t count;
  qcclDataType_t dtype;
  qcclRedOp_t op;
  bool inPlace;
  int groupSize = QCCL_CONFIG_UNDEF_INT;
};

std::string caseName(const Case& c) {
  return specTestName(c.codec) + "_" + c.algorithm + "_" + dtypeName(c.dtype) + "_" + opName(c.op) +
         "_" + std::to_string(c.ranks) + "ranks_count" + std::to_string(c.count) +
         (c.inPlace ? "_inplace" : "");
}

void PrintTo(const Case& c, std::ostream* os) { *os << caseName(c); }

// The seed every rank of a communicator derives from its unique id (+rht signs).
uint64_t commSeed(const qcclUniqueId& id) {
  return sipHash24(reinterpret_cast<const uint8_t*>(id.internal) + 24, "qccl-seed", 9);
}

// Runs the case; outputs[r] holds rank r's result bytes.
std::vector<std::vector<uint8_t>> run(const Case& c, qcclUniqueId* id) {
  std::vector<std::vector<uint8_t>> outputs(size_t(c.ranks));
  std::mutex mutex;
  CommOptions options;
  options.codec = c.codec.c_str();
  options.algorithm = c.algorithm.c_str();
  options.groupSize = c.groupSize;
  runRanks(
      c.ranks, options,
      [&](int r, qcclComm_t comm) {
        std::vector<uint8_t> in;
        std::vector<double> values;
        makeInput(r, c.count, c.dtype, in, values);
        std::vector<uint8_t> out(in.size(), 0xCD);
        void* recv = c.inPlace ? in.data() : out.data();
        const qcclResult_t rc =
            qcclAllReduce(in.data(), recv, c.count, c.dtype, c.op, comm, nullptr);
        std::lock_guard<std::mutex> lock(mutex);
        if (rc != qcclSuccess) ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
        outputs[size_t(r)] = c.inPlace ? in : out;
      },
      id);
  return outputs;
}

class Allreduce : public ::testing::TestWithParam<Case> {};

TEST_P(Allreduce, MatchesReference) {
  const Case& c = GetParam();
  qcclUniqueId id;
  const std::vector<std::vector<uint8_t>> out = run(c, &id);
  for (int r = 1; r < c.ranks; ++r) {
    ASSERT_EQ(out[size_t(r)], out[0]) << "rank " << r << " differs from rank 0";
  }
  std::vector<std::vector<double>> inputs(size_t(c.ranks));
  for (int r = 0; r < c.ranks; ++r) {
    std::vector<uint8_t> bytes;
    makeInput(r, c.count, c.dtype, bytes, inputs[size_t(r)]);
  }
  std::vector<double> exact(c.count, 0.0), absSum(c.count, 0.0);
  for (size_t i = 0; i < c.count; ++i) {
    exact[i] = inputs[0][i];
    for (int r = 0; r < c.ranks; ++r) {
      const double v = inputs[size_t(r)][i];
      absSum[i] += std::fabs(v);
      if (r == 0) continue;
      exact[i] = c.op == qcclMax ? std::max(exact[i], v) : exact[i] + v;
    }
  }
  const double divisor = c.op == qcclAvg ? c.ranks : 1;
  const codec::CodecSpec spec = codec::parseCodecSpec(c.codec);
  const bool floatWire = c.dtype != qcclInt32;
  const bool compressed = spec.format != codec::Format::None && floatWire && c.op != qcclMax &&
                          c.ranks > 1 && !(c.algorithm == "hier" && c.groupSize == c.ranks);
  std::vector<double> bound(c.count, 0.0);
  if (compressed && c.algorithm != "ring") {
    // Contributions to the compressed stage: each rank's vector (sra), or each group's exact sum
    // over the slices (hier); chunks owned as the algorithm splits them.
    std::vector<std::vector<double>> contributions = inputs;
    std::vector<OwnedSpan> chunks;
    const size_t unit =
        std::lcm(size_t(spec.block ? spec.block : 1), size_t(spec.rhtSize ? spec.rhtSize : 1));
    if (c.algorithm == "hier") {
      const int g = c.groupSize, groups = c.ranks / g;
      contributions.assign(size_t(groups), std::vector<double>(c.count, 0.0));
      for (int r = 0; r < c.ranks; ++r)
        for (size_t i = 0; i < c.count; ++i)
          contributions[size_t(r / g)][i] += inputs[size_t(r)][i];
      for (const coll::Span& slice : coll::partition(c.count, g, unit)) {
        const std::vector<coll::Span> inner = coll::partition(slice.size(), groups, unit);
        for (int k = 0; k < groups; ++k) {
          chunks.push_back(
              {{slice.begin + inner[size_t(k)].begin, slice.begin + inner[size_t(k)].end}, k});
        }
      }
    } else {
      const std::vector<coll::Span> spans = coll::partition(c.count, c.ranks, unit);
      for (int k = 0; k < c.ranks; ++k) chunks.push_back({spans[size_t(k)], k});
    }
    if (spec.rhtSize == 0) {
      bound = scatterReduceBound(spec, contributions, chunks);
    } else {
      // The rotation is orthogonal: bound the L2 error per chunk in the rotated domain.
      std::vector<std::vector<double>> rotated;
      for (const auto& x : contributions) {
        const std::vector<float> xf(x.begin(), x.end());
        const std::vector<float> y = quantizerDomain(spec, xf, commSeed(id));
        rotated.emplace_back(y.begin(), y.begin() + long(c.count));
      }
      const std::vector<double> b = scatterReduceBound(spec, rotated, chunks);
      for (const OwnedSpan& chunk : chunks) {
        double bound2 = 0, err2 = 0;
        for (size_t i = chunk.span.begin; i < chunk.span.end; ++i) {
          bound2 += b[i] * b[i];
          const double d = readValue(out[0].data(), c.dtype, i) * divisor - exact[i];
          err2 += d * d;
          bound2 += std::pow(outputRounding(c.dtype, exact[i]) * divisor, 2);
        }
        EXPECT_LE(std::sqrt(err2), std::sqrt(bound2) * 1.0001 + 1e-9) << caseName(c);
      }
      return;
    }
  } else if (compressed) {
    const size_t unit = spec.block ? spec.block : 1;
    bound = ringBound(spec, inputs, coll::partition(c.count, c.ranks, unit));
  }
  for (size_t i = 0; i < c.count; ++i) {
    const double got = readValue(out[0].data(), c.dtype, i);
    double allowed = bound[i] / divisor + outputRounding(c.dtype, exact[i] / divisor) +
                     (floatWire ? 1e-6 * absSum[i] / divisor : 0.0);
    if (c.op == qcclMax) allowed = outputRounding(c.dtype, exact[i]);
    // Integer Avg divides the (exact) sum with C's truncation toward zero.
    const double want = floatWire ? exact[i] / divisor : std::trunc(exact[i] / divisor);
    ASSERT_LE(std::fabs(got - want), allowed)
        << caseName(c) << " element " << i << " got " << got << " exact " << want;
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  // Exact paths: every rank count, dtype, op, placement, and the awkward counts.
  for (int n : {1, 2, 3, 4, 7}) {
    for (size_t count : {size_t(0), size_t(1), size_t(7), size_t(4099)}) {
      for (qcclDataType_t t : {qcclFloat32, qcclBfloat16, qcclFloat16, qcclInt32}) {
        for (qcclRedOp_t op : {qcclSum, qcclAvg, qcclMax}) {
          all.push_back({"none", "sra", n, count, t, op, count == 7});
        }
      }
    }
  }
  // Compressed: every codec on fp32, Sum and Avg; the dtypes and placements on a few.
  for (const std::string& codec : allFormatSpecs()) {
    if (codec == "none") continue;
    for (int n : {2, 3, 7}) {
      all.push_back({codec, "sra", n, 4099, qcclFloat32, qcclSum, false});
      all.push_back({codec, "sra", n, 7, qcclFloat32, qcclAvg, true});
    }
  }
  for (const char* codec : {"fp8e4m3", "mxfp4", "nvfp4", "int8"}) {
    for (qcclDataType_t t : {qcclBfloat16, qcclFloat16}) {
      all.push_back({codec, "sra", 4, 4099, t, qcclSum, false});
      all.push_back({codec, "sra", 3, 1000, t, qcclAvg, true});
    }
    all.push_back({codec, "sra", 4, 1000003, qcclFloat32, qcclSum, true});
  }
  for (const char* codec : {"nvfp4+rht", "int4+rht", "fp8e4m3+sr", "mxfp4+sr+rht"}) {
    all.push_back({codec, "sra", 4, 4099, qcclFloat32, qcclSum, false});
  }
  for (int n : {2, 3, 4, 7}) {
    all.push_back({"fp8e4m3", "ring", n, 4099, qcclFloat32, qcclSum, false});
    all.push_back({"int8", "ring", n, 1000, qcclBfloat16, qcclAvg, true});
  }
  Case hier{"fp8e4m3", "hier", 4, 4099, qcclFloat32, qcclSum, false, 2};
  all.push_back(hier);
  hier.ranks = 6;
  hier.groupSize = 3;
  hier.codec = "int4";
  all.push_back(hier);
  hier.ranks = 4;
  hier.groupSize = 2;
  hier.codec = "nvfp4";
  hier.op = qcclAvg;
  hier.dtype = qcclBfloat16;
  all.push_back(hier);
  return all;
}

INSTANTIATE_TEST_SUITE_P(Cases, Allreduce, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return caseName(info.param); });

// Exact allreduces on a number of ranks that is not a power of two take one of three paths by
// size (allreduce_exact.cc): one round for small calls, two framed rounds, or pipelined segments
// for large ones. All add the same values in the same order: the first elements of a two-round
// call equal a one-round call on the same first elements, and a pipelined call (in place or not)
// equals the two-round one, bit for bit, for every float dtype and integers, for Sum, Avg and Max.
TEST(ExactAllreduce, EveryPathGivesTheSameBits) {
  const int n = 3;
  const size_t small = 300, large = 6000;
  const char* kSegmentBytes = "1024";  // 6000 elements are pipelined in segments of 1024 bytes
  for (const qcclDataType_t t : {qcclFloat32, qcclBfloat16, qcclFloat16, qcclInt32}) {
    const size_t width = t == qcclFloat32 || t == qcclInt32 ? 4 : 2;
    ASSERT_FALSE(coll::exactAllreduceByDoubling(small, t, n));
    ASSERT_TRUE(coll::exactAllreduceInOneRound(small * width, n));
    ASSERT_FALSE(coll::exactAllreduceInOneRound(large * width, n));
    ASSERT_EQ(coll::exactSegmentStep(large / n, width, (1 << 20) / 4), 0u);  // default: framed
    ASSERT_NE(coll::exactSegmentStep(large / n, width, 1024 / 4), 0u);
    for (const qcclRedOp_t op : {qcclSum, qcclAvg, qcclMax}) {
      std::vector<std::vector<uint8_t>> twoRounds(n);
      std::mutex mutex;
      runRanks(n, CommOptions{}, [&](int r, qcclComm_t comm) {
        std::vector<uint8_t> in;
        std::vector<double> values;
        makeInput(r, large, t, in, values);
        std::vector<uint8_t> whole(large * width), first(small * width);
        const qcclResult_t a = qcclAllReduce(in.data(), whole.data(), large, t, op, comm, nullptr);
        const qcclResult_t b = qcclAllReduce(in.data(), first.data(), small, t, op, comm, nullptr);
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_EQ(a, qcclSuccess);
        ASSERT_EQ(b, qcclSuccess);
        EXPECT_TRUE(std::equal(first.begin(), first.end(), whole.begin()))
            << "dtype " << t << " op " << op << " rank " << r;
        twoRounds[size_t(r)] = whole;
      });
      setenv("QCCL_SEGMENT_BYTES", kSegmentBytes, 1);  // read at init, before the threads start
      runRanks(n, CommOptions{}, [&](int r, qcclComm_t comm) {
        std::vector<uint8_t> in, out(large * width);
        std::vector<double> values;
        makeInput(r, large, t, in, values);
        const qcclResult_t a = qcclAllReduce(in.data(), out.data(), large, t, op, comm, nullptr);
        const qcclResult_t b = qcclAllReduce(in.data(), in.data(), large, t, op, comm, nullptr);
        std::lock_guard<std::mutex> lock(mutex);
        ASSERT_EQ(a, qcclSuccess);
        ASSERT_EQ(b, qcclSuccess);
        EXPECT_EQ(out, twoRounds[size_t(r)]) << "dtype " << t << " op " << op << " rank " << r;
        EXPECT_EQ(in, twoRounds[size_t(r)]) << "in place: dtype " << t << " op " << op;
      });
      unsetenv("QCCL_SEGMENT_BYTES");
    }
  }
}

// The combination of two partial results, as coll::Accumulator defines it (docs/ALGORITHMS.md).
template <class T>
T combinePair(qcclRedOp_t op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == qcclMax) return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);
    return op == qcclProd ? a * b : a + b;
  } else {
    using U = std::make_unsigned_t<T>;
    if (op == qcclMax) return std::max(a, b);
    return op == qcclProd ? T(U(a) * U(b)) : T(U(a) + U(b));
  }
}

// Small calls on a power-of-two number of ranks, in dtypes that accumulate in their own type, go
// by recursive doubling, somewhat larger ones by recursive halving and doubling
// (allreduce_doubling.cc): either way every rank ends with the bits of the pairwise tree
// ((x0 + x1) + (x2 + x3)) + ..., NaN and infinities included, in place and out of place, also
// where the halves are uneven (odd counts).
TEST(ExactAllreduce, DoublingAndHalvingAddInTreeOrder) {
  for (const int n : {2, 4, 8}) {
    for (const size_t count : {size_t(301), size_t(3001), size_t(9001)}) {
      for (const qcclDataType_t t : {qcclFloat32, qcclInt32}) {
        const bool doubling = count == 301;
        ASSERT_EQ(coll::exactAllreduceByDoubling(count, t, n), doubling);
        ASSERT_EQ(coll::exactAllreduceByHalving(count, t, n), !doubling);
        for (const qcclRedOp_t op : {qcclSum, qcclAvg, qcclMax, qcclProd}) {
          std::vector<std::vector<uint8_t>> inputs(static_cast<size_t>(n));
          std::vector<double> values;
          for (int r = 0; r < n; ++r) makeInput(r, count, t, inputs[size_t(r)], values);
          if (t == qcclFloat32) {  // a NaN, both infinities, and a NaN from inf - inf
            const float specials[4] = {std::nanf(""), INFINITY, -INFINITY, INFINITY};
            for (int k = 0; k < 4; ++k) {
              std::memcpy(inputs[size_t((k + 1) % n)].data() + 4 * size_t(k), &specials[k], 4);
            }
            const float minusInf = -INFINITY;
            std::memcpy(inputs[size_t(n - 1)].data() + 4 * 3, &minusInf, 4);
          }
          std::vector<uint8_t> expected(count * 4);
          bool treeDiffersFromRankOrder = false;
          auto reference = [&](auto zero) {
            using T = decltype(zero);
            for (size_t i = 0; i < count; ++i) {
              std::vector<T> level(static_cast<size_t>(n));
              for (int r = 0; r < n; ++r)
                std::memcpy(&level[size_t(r)], &inputs[size_t(r)][4 * i], 4);
              T inOrder = level[0];
              for (int r = 1; r < n; ++r) inOrder = combinePair(op, inOrder, level[size_t(r)]);
              for (int width = 1; width < n; width *= 2) {
                for (int b = 0; b < n; b += 2 * width) {
                  level[size_t(b)] = combinePair(op, level[size_t(b)], level[size_t(b + width)]);
                }
              }
              T v = op == qcclAvg ? T(level[0] / T(n)) : level[0];
              treeDiffersFromRankOrder |= std::memcmp(&level[0], &inOrder, 4) != 0;
              std::memcpy(&expected[4 * i], &v, 4);
            }
          };
          if (t == qcclFloat32) {
            reference(float{});
          } else {
            reference(int32_t{});
          }
          if (n == 4 && count == 301 && t == qcclFloat32 && op == qcclSum) {
            EXPECT_TRUE(treeDiffersFromRankOrder) << "the inputs do not tell the orders apart";
          }
          std::mutex mutex;
          runRanks(n, CommOptions{}, [&](int r, qcclComm_t comm) {
            std::vector<uint8_t> in = inputs[size_t(r)], out(count * 4, 0xCD);
            const qcclResult_t a =
                qcclAllReduce(in.data(), out.data(), count, t, op, comm, nullptr);
            const qcclResult_t b = qcclAllReduce(in.data(), in.data(), count, t, op, comm, nullptr);
            std::lock_guard<std::mutex> lock(mutex);
            ASSERT_EQ(a, qcclSuccess) << qcclGetLastError(nullptr);
            ASSERT_EQ(b, qcclSuccess) << qcclGetLastError(nullptr);
            EXPECT_EQ(out, expected) << n << " ranks, count " << count << ", dtype " << t << " op "
                                     << op << " rank " << r;
            EXPECT_EQ(in, expected) << "in place: " << n << " ranks, count " << count << ", dtype "
                                    << t << " op " << op;
          });
        }
      }
    }
  }
  // bf16 would lose the single rounding of its fp32 sum; fp16 likewise: they stay on one round.
  EXPECT_FALSE(coll::exactAllreduceByDoubling(301, qcclBfloat16, 4));
  EXPECT_FALSE(coll::exactAllreduceByDoubling(301, qcclFloat32, 6));
  EXPECT_FALSE(coll::exactAllreduceByHalving(3001, qcclFloat32, 6));
  EXPECT_FALSE(coll::exactAllreduceByDoubling(coll::kDoublingWireBytes / 8 + 1, qcclFloat32, 4));
  EXPECT_FALSE(coll::exactAllreduceByHalving(coll::kHalvingBytes / 4 + 1, qcclFloat32, 4));
  EXPECT_FALSE(coll::exactAllreduceByHalving(3001, qcclBfloat16, 4));
}

}  // namespace
}  // namespace qccl::test
