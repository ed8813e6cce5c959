// QCCL_COMPRESS_ONE_RANK=1: at one rank, where nothing travels, a compressed allreduce still
// runs its codec path (the owner's encode and decode of the sum: the codec's round trip, bit for
// bit) and so does allgather; reduce-scatter, whose only contribution is the rank's own, stays
// exact. Over the tagged schedules and the stream ones (the stand-in NCCL) alike.
#include <gtest/gtest.h>

#include <cstdlib>

#include "qccl/qccl_codec.h"
#include "tests/coll/collective_reference.h"
#include "tests/coll/ranks.h"

namespace qccl::test {
namespace {

// The codec's round trip of count elements of dtype, through the C API.
std::vector<uint8_t> roundTrip(const char* spec, const std::vector<uint8_t>& in, size_t count,
                               qcclDataType_t dtype, uint64_t seed) {
  qcclCodec_t codec;
  EXPECT_EQ(qcclCodecParse(spec, &codec), qcclSuccess);
  size_t bytes = 0;
  EXPECT_EQ(qcclCodecEncodedSize(codec, count, dtype, &bytes), qcclSuccess);
  std::vector<uint8_t> chunk(bytes), out(in.size());
  qcclEncodeOptions_t options = QCCL_ENCODE_OPTIONS_INITIALIZER;
  options.seed = seed;
  options.call = 3;  // the owner's stream of the first call (sequence 1, server: 2 * 1 + 1)
  EXPECT_EQ(qcclEncode(codec, in.data(), count, dtype, chunk.data(), bytes, &options, nullptr),
            qcclSuccess);
  EXPECT_EQ(qcclDecode(codec, chunk.data(), bytes, out.data(), count, dtype, nullptr), qcclSuccess);
  return out;
}

class OneRank : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(OneRank, CompressedCallsRunTheCodec) {
  const auto& [spec, transport] = GetParam();
  setenv("QCCL_NCCL_LIB", QCCL_STANDIN_NCCL, 1);
  setenv("QCCL_COMPRESS_ONE_RANK", "1", 1);
  constexpr size_t kCount = 5003;
  CommOptions options;
  options.transport = transport.c_str();
  options.codec = spec.c_str();
  qcclUniqueId id;
  runRanks(
      1, options,
      [&](int, qcclComm_t comm) {
        for (qcclDataType_t dtype : {qcclFloat32, qcclBfloat16}) {
          std::vector<uint8_t> in, out(kCount * typeBytes(dtype));
          std::vector<double> values;
          makeInput(0, kCount, dtype, in, values);
          qcclCallConfig_t fresh = QCCL_CALL_CONFIG_INITIALIZER;
          fresh.efKey = 100 + uint64_t(dtype);  // zero residuals
          ASSERT_EQ(
              qcclAllReduceEx(in.data(), out.data(), kCount, dtype, qcclSum, comm, nullptr, &fresh),
              qcclSuccess)
              << qcclGetLastError(comm);
          // The owner encodes the fp32 sum: the round trip of the input as fp32.
          std::vector<uint8_t> asFloat(kCount * 4);
          for (size_t i = 0; i < kCount; ++i) {
            const float f = float(values[i]);
            std::memcpy(&asFloat[4 * i], &f, 4);
          }
          // (+rht's signs come from the communicator's seed: its result is only checked to differ.)
          if (spec.find("rht") == std::string::npos && dtype == qcclFloat32) {
            EXPECT_EQ(out, roundTrip(spec.c_str(), asFloat, kCount, qcclFloat32, 0)) << "allreduce";
          }
          if (dtype == qcclFloat32) {  // (bf16 data through the bf16 codec comes back as it was)
            EXPECT_NE(out, in) << "the allreduce returned its input: no codec ran";
          }
          ASSERT_EQ(qcclReduceScatter(in.data(), out.data(), kCount, dtype, qcclSum, comm, nullptr),
                    qcclSuccess);
          EXPECT_EQ(out, in) << "reduce-scatter of one contribution is exact";
        }
      },
      &id);
  unsetenv("QCCL_COMPRESS_ONE_RANK");
}

INSTANTIATE_TEST_SUITE_P(Codecs, OneRank,
                         ::testing::Combine(::testing::Values("fp8e4m3", "int4", "nvfp4", "mxfp4",
                                                              "sign1", "bf16", "int8+rht"),
                                            ::testing::Values("local", "nccl")),
                         [](const auto& info) {
                           return specTestName(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

}  // namespace
}  // namespace qccl::test
