// Error-feedback decay through the collectives (docs/ERROR_FEEDBACK.md, "Decay"): beta = 1 is
// plain error feedback and beta = 0 is no error feedback, call for call and bit for bit; beta in
// (0, 1) scales the worker's and the owner's residuals alike, as a replay of the algorithms
// through the codec API shows; a beta out of [0, 1] is refused before anything is written.
#include <gtest/gtest.h>
#include <qccl/qccl_codec.h>

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <mutex>

#include "collectives/partition.h"
#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

constexpr int kCalls = 5;

// Rank r's input at call t: a different vector each call, so the residuals carry something.
std::vector<float> callInput(int r, int t, size_t count) {
  std::vector<uint8_t> bytes;
  std::vector<double> values;
  makeInput(r + 5 * t, count, qcclFloat32, bytes, values);
  return std::vector<float>(values.begin(), values.end());
}

struct Variant {
  uint64_t key;
  float decay;  // QCCL_CONFIG_UNDEF_FLOAT: the communicator's (1)
  unsigned flags;
  bool oldCaller;  // a qcclCallConfig_t from before efDecay existed
};

// Each variant's outputs of kCalls allreduces on one communicator, under its own key.
std::vector<std::vector<float>> runVariant(qcclComm_t comm, int r, size_t count, const Variant& v) {
  std::vector<std::vector<float>> outs;
  for (int t = 0; t < kCalls; ++t) {
    const std::vector<float> in = callInput(r, t, count);
    std::vector<float> out(count);
    qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
    config.efKey = v.key;
    config.flags = v.flags;
    config.efDecay = v.decay;
    if (v.oldCaller) config.size = offsetof(qcclCallConfig_t, efDecay);
    if (qcclAllReduceEx(in.data(), out.data(), count, qcclFloat32, qcclAvg, comm, nullptr,
                        &config) != qcclSuccess) {
      ADD_FAILURE() << "rank " << r << ": " << qcclGetLastError(nullptr);
      return outs;
    }
    outs.push_back(out);
  }
  return outs;
}

class EfDecayLimits : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EfDecayLimits, OneIsPlainErrorFeedbackZeroIsNone) {
  const auto& [codec, algorithm] = GetParam();
  const size_t count = 3001;
  CommOptions options;
  options.codec = codec.c_str();
  options.algorithm = algorithm.c_str();
  std::mutex mutex;
  runRanks(3, options, [&](int r, qcclComm_t comm) {
    const auto plain = runVariant(comm, r, count, {1, QCCL_CONFIG_UNDEF_FLOAT, 0, true});
    const auto one = runVariant(comm, r, count, {2, 1.0f, 0, false});
    const auto zero = runVariant(comm, r, count, {3, 0.0f, 0, false});
    const auto noEf =
        runVariant(comm, r, count, {4, QCCL_CONFIG_UNDEF_FLOAT, QCCL_CALL_NO_EF, false});
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(plain.size(), size_t(kCalls));
    for (int t = 0; t < kCalls; ++t) {
      EXPECT_EQ(one[size_t(t)], plain[size_t(t)]) << "rank " << r << " call " << t;
      EXPECT_EQ(zero[size_t(t)], noEf[size_t(t)]) << "rank " << r << " call " << t;
    }
    // The residuals change what is sent: without them the later calls differ.
    EXPECT_NE(plain.back(), noEf.back()) << "rank " << r;
  });
}

INSTANTIATE_TEST_SUITE_P(Algorithms, EfDecayLimits,
                         ::testing::Values(std::make_tuple("int4+rht", "sra"),
                                           std::make_tuple("nvfp4", "ring"),
                                           std::make_tuple("topk0.05+int2/b512", "gather")),
                         [](const auto& info) {
                           return specTestName(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

// The codec API's encode with a decayed residual, and its decode added into acc.
std::vector<uint8_t> encode(qcclCodec_t codec, const float* x, size_t count, float* residual,
                            float decay) {
  size_t bytes = 0;
  EXPECT_EQ(qcclCodecEncodedSize(codec, count, qcclFloat32, &bytes), qcclSuccess);
  std::vector<uint8_t> chunk(bytes);
  qcclEncodeOptions_t o = QCCL_ENCODE_OPTIONS_INITIALIZER;
  o.residual = residual;
  o.residualDecay = decay;
  EXPECT_EQ(qcclEncode(codec, x, count, qcclFloat32, chunk.data(), bytes, &o, nullptr),
            qcclSuccess);
  return chunk;
}

void decodeAdd(qcclCodec_t codec, const std::vector<uint8_t>& chunk, float* acc, size_t count) {
  EXPECT_EQ(qcclDecodeAccumulate(codec, chunk.data(), chunk.size(), acc, count, nullptr),
            qcclSuccess);
}

// What every rank's kCalls outputs must be, replayed through the codec API. sra (ALGORITHMS.md):
// rank r encodes chunk j of its input with its worker residual; owner j adds its own chunk in fp32
// and the others' decoded ones in rank order, divides by n, encodes the sum with its server
// residual, and everyone decodes that. gather: every rank encodes its whole vector with its worker
// residual, and everyone adds the n decodes in rank order and divides by n.
std::vector<std::vector<float>> replay(const std::string& spec, const std::string& algorithm, int n,
                                       size_t count, float decay) {
  qcclCodec_t codec;
  EXPECT_EQ(qcclCodecParse(spec.c_str(), &codec), qcclSuccess);
  const codec::CodecSpec parsed = codec::parseCodecSpec(spec);
  const std::vector<coll::Span> spans = coll::partition(count, n, parsed.block ? parsed.block : 1);
  std::vector<std::vector<float>> worker(size_t(n), std::vector<float>(count, 0.0f));
  std::vector<std::vector<float>> server(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) server[size_t(j)].assign(spans[size_t(j)].size(), 0.0f);
  std::vector<std::vector<float>> outs;
  for (int t = 0; t < kCalls; ++t) {
    std::vector<std::vector<float>> in;
    for (int r = 0; r < n; ++r) in.push_back(callInput(r, t, count));
    std::vector<float> out(count, 0.0f);
    if (algorithm == "gather") {
      for (int r = 0; r < n; ++r) {
        decodeAdd(codec,
                  encode(codec, in[size_t(r)].data(), count, worker[size_t(r)].data(), decay),
                  out.data(), count);
      }
      for (float& v : out) v /= float(n);
    } else {
      for (int j = 0; j < n; ++j) {
        const coll::Span s = spans[size_t(j)];
        std::vector<float> sum(s.size(), 0.0f);
        for (int r = 0; r < n; ++r) {
          const float* x = in[size_t(r)].data() + s.begin;
          if (r == j) {
            for (size_t i = 0; i < s.size(); ++i) sum[i] += x[i];
          } else {
            decodeAdd(codec, encode(codec, x, s.size(), worker[size_t(r)].data() + s.begin, decay),
                      sum.data(), s.size());
          }
        }
        for (float& v : sum) v /= float(n);
        decodeAdd(codec, encode(codec, sum.data(), s.size(), server[size_t(j)].data(), decay),
                  out.data() + s.begin, s.size());
      }
    }
    outs.push_back(out);
  }
  return outs;
}

class EfDecayReplay : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EfDecayReplay, BothStagesDecayAsTheCodecApiSays) {
  const auto& [codec, algorithm] = GetParam();
  const int n = 3;
  const size_t count = 3001;
  const float decay = 0.6f;
  const auto want = replay(codec, algorithm, n, count, decay);
  const auto plain = replay(codec, algorithm, n, count, 1.0f);
  ASSERT_NE(want.back(), plain.back()) << "the decay changes nothing on these inputs";
  CommOptions options;
  options.codec = codec.c_str();
  options.algorithm = algorithm.c_str();
  std::mutex mutex;
  runRanks(n, options, [&](int r, qcclComm_t comm) {
    const auto got = runVariant(comm, r, count, {7, decay, 0, false});
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(got.size(), want.size());
    for (size_t t = 0; t < got.size(); ++t)
      EXPECT_EQ(got[t], want[t]) << "rank " << r << " call " << t;
  });
}

INSTANTIATE_TEST_SUITE_P(Algorithms, EfDecayReplay,
                         ::testing::Values(std::make_tuple("int4", "sra"),
                                           std::make_tuple("fp8e4m3", "sra"),
                                           std::make_tuple("topk0.05+int2/b512", "gather")),
                         [](const auto& info) {
                           return specTestName(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

TEST(EfDecay, OutOfRangeIsRefusedNothingWritten) {
  const size_t count = 4096;
  CommOptions options;
  options.codec = "int4";
  std::mutex mutex;
  runRanks(2, options, [&](int r, qcclComm_t comm) {
    const std::vector<float> in = callInput(r, 0, count);
    for (float decay : {-0.5f, 1.5f, std::nanf(""), INFINITY}) {
      std::vector<float> out(count, 42.0f);
      qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
      config.efDecay = decay;
      const qcclResult_t result = qcclAllReduceEx(in.data(), out.data(), count, qcclFloat32,
                                                  qcclSum, comm, nullptr, &config);
      std::lock_guard<std::mutex> lock(mutex);
      EXPECT_EQ(result, qcclInvalidArgument) << "decay " << decay;
      EXPECT_NE(std::string(qcclGetLastError(nullptr)).find("efDecay"), std::string::npos)
          << qcclGetLastError(nullptr);
      EXPECT_EQ(out, std::vector<float>(count, 42.0f)) << "decay " << decay;
    }
  });
  // The communicator's default: config, then QCCL_EF_DECAY.
  qcclUniqueId id;
  ASSERT_EQ(qcclGetUniqueId(&id), qcclSuccess);
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  config.transport = "local";
  config.efDecay = 2.0f;
  qcclComm_t comm = nullptr;
  EXPECT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclInvalidArgument);
  EXPECT_NE(std::string(qcclGetLastError(nullptr)).find("efDecay"), std::string::npos);
  config.efDecay = QCCL_CONFIG_UNDEF_FLOAT;
  setenv("QCCL_EF_DECAY", "0.5x", 1);
  EXPECT_EQ(qcclCommInitRankConfig(&comm, 1, id, 0, &config), qcclInvalidArgument);
  unsetenv("QCCL_EF_DECAY");
  EXPECT_NE(std::string(qcclGetLastError(nullptr)).find("QCCL_EF_DECAY=0.5x"), std::string::npos)
      << qcclGetLastError(nullptr);
}

}  // namespace
}  // namespace qccl::test
