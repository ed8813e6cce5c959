// The cost model (src/comm/cost_model.h): its link curve, its overlap rule, and the threshold it
// derives, on made-up inputs whose answers can be worked out by hand. That its wire bytes are what
// the collectives send is checked against the communicator's counters in tests/coll.
#include "src/comm/cost_model.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace qccl {
namespace {

// A link with a fixed cost per exchange and a rate: exchanges take latency + bytes × peers / rate.
LinkCurve straightLink(int nranks, double latency, double bytesPerSecond) {
  LinkCurve link;
  link.nranks = nranks;
  for (size_t k = 0; k < LinkCurve::kPoints; ++k) {
    link.seconds[k] =
        latency + double(LinkCurve::probeBytes(nranks, k)) * (nranks - 1) / bytesPerSecond;
  }
  return link;
}

CostInputs inputs(int nranks, double latency, double bytesPerSecond, double codecRate) {
  CostInputs in;
  in.nranks = nranks;
  in.link = straightLink(nranks, latency, bytesPerSecond);
  in.rates = {codecRate, codecRate, 4e9, 4e9};
  in.segmentElements = 1 << 18;
  return in;
}

const codec::CodecSpec kFp8 = codec::parseCodecSpec("fp8e4m3");

TEST(LinkCurve, InterpolatesBetweenPointsAndExtrapolatesAtTheLastRate) {
  const LinkCurve link = straightLink(4, 100e-6, 125e6);
  for (size_t k = 0; k < LinkCurve::kPoints; ++k) {
    EXPECT_DOUBLE_EQ(link.exchangeSeconds(LinkCurve::probeBytes(4, k)), link.seconds[k]);
  }
  EXPECT_NEAR(link.bytesPerSecond(), 125e6, 1e3);
  // A straight line stays straight, between the points and far past them.
  for (size_t bytes : {size_t(1000), size_t(100000), size_t(64) << 20}) {
    EXPECT_NEAR(link.exchangeSeconds(bytes), 100e-6 + double(bytes) * 3 / 125e6, 1e-9) << bytes;
  }
  EXPECT_DOUBLE_EQ(link.exchangeSeconds(0), link.seconds[0]);  // below the first point: flat
}

TEST(LinkCurve, OneStalledExchangeDoesNotSkewTheRate) {
  LinkCurve link = straightLink(4, 100e-6, 125e6);
  link.seconds[LinkCurve::kPoints - 2] *= 3;  // the next-to-last probe stalled
  EXPECT_NEAR(link.bytesPerSecond(), 125e6, 1e3);
}

TEST(LinkCurve, ProbesStayWithinEightMiBPerRankAtLargeRankCounts) {
  for (int n : {2, 9, 64, 1024}) {
    for (size_t k = 0; k < LinkCurve::kPoints; ++k) {
      EXPECT_LE(LinkCurve::probeBytes(n, k) * size_t(n - 1), size_t(8) << 20) << n;
    }
  }
  const LinkCurve link = straightLink(1024, 1e-3, 10e9);  // capped points repeat: still defined
  EXPECT_GT(link.bytesPerSecond(), 0);
  EXPECT_GT(link.exchangeSeconds(size_t(1) << 20), link.exchangeSeconds(8192));
}

TEST(CostModel, ExactAllreduceIsTwoExchangesOfAShareAndTheReduction) {
  const CostInputs in = inputs(4, 100e-6, 125e6, 1e9);
  const size_t count = 1 << 20;  // 4 MiB of fp32; shares of 1 MiB
  const Prediction p = predictExact(in, CollectiveKind::AllReduce, count, qcclFloat32);
  EXPECT_EQ(p.wireBytes, 2 * 3 * ((size_t(1) << 20) + 16));
  EXPECT_NEAR(p.wireSeconds, 2 * (100e-6 + 3.0 * ((1 << 20) + 16) / 125e6), 1e-9);
  EXPECT_NEAR(p.seconds, p.wireSeconds + p.cpuSeconds, 1e-12);  // not pipelined
}

TEST(CostModel, CompressedCallsOverlapTheirCodecWorkWithTheWire) {
  for (double codecRate : {1e8, 1e9, 1e10}) {
    const CostInputs in = inputs(4, 100e-6, 125e6, codecRate);
    const Prediction p =
        predictCompressed(in, CollectiveKind::AllReduce, 16 << 20, qcclFloat32, kFp8);
    const double agreement = in.link.exchangeSeconds(32);
    EXPECT_GE(p.seconds, agreement + std::max(p.wireSeconds, p.cpuSeconds) - 1e-12);
    EXPECT_LT(p.seconds, agreement + p.wireSeconds + p.cpuSeconds);
  }
}

TEST(CostModel, CompressedWireBytesFollowTheCodecsChunks) {
  const CostInputs in = inputs(4, 100e-6, 125e6, 1e9);
  const size_t count = 16 << 20;
  const Prediction exact = predictExact(in, CollectiveKind::AllReduce, count, qcclFloat32);
  const Prediction fp8 = predictCompressed(in, CollectiveKind::AllReduce, count, qcclFloat32, kFp8);
  const double ratio = double(exact.wireBytes) / double(fp8.wireBytes);
  EXPECT_GT(ratio, 3.8);  // fp8: a byte per element, scales and headers on top
  EXPECT_LT(ratio, 4.0);
}

TEST(CostModel, HierSendsExactSlicesInsideGroupsAndCompressesAcross) {
  CostInputs hier = inputs(4, 100e-6, 125e6, 1e9);
  hier.algorithm = coll::AllreduceAlgorithm::Hier;
  hier.groupSize = 2;
  hier.groupLink = straightLink(2, 10e-6, 10e9);     // inside a host: fast
  hier.acrossLink = straightLink(2, 100e-6, 125e6);  // across hosts: the slow link
  const size_t count = 1 << 22;                      // 16 MiB of fp32: slices of 8 MiB
  const Prediction p = predictCompressed(hier, CollectiveKind::AllReduce, count, qcclFloat32, kFp8);
  CostInputs across = inputs(2, 100e-6, 125e6, 1e9);
  const Prediction inter =
      predictCompressed(across, CollectiveKind::AllReduce, count / 2, qcclFloat32, kFp8);
  const size_t slice = 4 * (count / 2) + 16;  // one exact slice each way inside the group
  EXPECT_EQ(p.wireBytes, 2 * slice + inter.wireBytes);
  EXPECT_GT(p.seconds, inter.seconds);
  // Against sra over the slow link between all four: half the compressed bytes cross it.
  const Prediction sra = predictCompressed(inputs(4, 100e-6, 125e6, 1e9), CollectiveKind::AllReduce,
                                           count, qcclFloat32, kFp8);
  EXPECT_LT(p.seconds, sra.seconds);
}

TEST(CostModel, RingWaitsForEveryStep) {
  CostInputs ring = inputs(4, 100e-6, 125e6, 1e9);
  ring.algorithm = coll::AllreduceAlgorithm::Ring;
  const size_t count = 1 << 22;
  const Prediction p = predictCompressed(ring, CollectiveKind::AllReduce, count, qcclFloat32, kFp8);
  const Prediction sra = predictCompressed(inputs(4, 100e-6, 125e6, 1e9), CollectiveKind::AllReduce,
                                           count, qcclFloat32, kFp8);
  // The same bytes but for sra's agreement and segment headers; six latencies, nothing overlapped.
  EXPECT_NEAR(double(p.wireBytes), double(sra.wireBytes), 0.001 * double(sra.wireBytes));
  EXPECT_NEAR(p.seconds, p.wireSeconds + p.cpuSeconds, 1e-12);
  EXPECT_GT(p.seconds, sra.seconds);
}

TEST(CostModel, ASlowLinkMakesCompressionPayAtSmallerSizes) {
  const size_t slow =
      crossoverBytes(inputs(4, 100e-6, 30e6, 1e9), CollectiveKind::AllReduce, qcclFloat32, kFp8);
  const size_t fast =
      crossoverBytes(inputs(4, 100e-6, 1e9, 1e9), CollectiveKind::AllReduce, qcclFloat32, kFp8);
  EXPECT_LT(slow, fast);
  EXPECT_GT(slow, 0u);  // the agreement's extra exchange costs more than small calls save
}

TEST(CostModel, ThresholdIsWhereCompressedBecomesClearlyFaster) {
  const CostInputs in = inputs(4, 100e-6, 125e6, 1e9);
  for (CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
    const size_t threshold = crossoverBytes(in, kind, qcclFloat32, kFp8);
    ASSERT_NE(threshold, SIZE_MAX);
    const size_t perCount = kind == CollectiveKind::AllReduce ? 4 : 16;  // bytes of larger buffer
    auto gain = [&](size_t bytes) {
      const size_t count = bytes / perCount;
      return predictCompressed(in, kind, count, qcclFloat32, kFp8).seconds /
             predictExact(in, kind, count, qcclFloat32).seconds;
    };
    EXPECT_LT(gain(threshold), 0.9) << collectiveName(kind);
    EXPECT_GE(gain(threshold - 4 * perCount), 0.9) << collectiveName(kind);
    for (size_t bytes = threshold; bytes < (size_t(1) << 34); bytes *= 2) {
      EXPECT_LT(gain(bytes), 0.9) << collectiveName(kind) << " " << bytes;
    }
  }
}

TEST(CostModel, ACodecSlowerThanTheLinkNeverPays) {
  // 100 Gbit/s and a codec at 10 M elements/s: exact wins at every size.
  EXPECT_EQ(
      crossoverBytes(inputs(4, 5e-6, 12.5e9, 1e7), CollectiveKind::AllReduce, qcclFloat32, kFp8),
      SIZE_MAX);
}

// The plan's choice for topk: gather exactly where it sends no more than sra: always on two
// ranks; on more only where the per-chunk headers of sra's n chunks outweigh the data.
TEST(CostModel, TopkAllreduceGathersWhereItSendsLess) {
  const codec::CodecSpec topk = codec::parseCodecSpec("topk0.01+int2");
  auto algorithm = [&](int n, size_t count) {
    return compressedAllreduceAlgorithm(coll::AllreduceAlgorithm::Sra, n, 262144, count,
                                        qcclFloat32, topk);
  };
  for (size_t count : {size_t(1), size_t(4096), size_t(1) << 20, size_t(1) << 26}) {
    EXPECT_EQ(algorithm(2, count), coll::AllreduceAlgorithm::Gather) << count;
  }
  for (int n : {3, 4, 8}) {
    EXPECT_EQ(algorithm(n, 1000), coll::AllreduceAlgorithm::Gather) << n;
    EXPECT_EQ(algorithm(n, size_t(1) << 20), coll::AllreduceAlgorithm::Sra) << n;
    EXPECT_EQ(algorithm(n, size_t(1) << 26), coll::AllreduceAlgorithm::Sra) << n;
  }
  EXPECT_EQ(compressedAllreduceAlgorithm(coll::AllreduceAlgorithm::Sra, 2, 262144, 1 << 20,
                                         qcclFloat32, codec::parseCodecSpec("int4")),
            coll::AllreduceAlgorithm::Sra);
  EXPECT_EQ(compressedAllreduceAlgorithm(coll::AllreduceAlgorithm::Ring, 2, 262144, 1 << 20,
                                         qcclFloat32, topk),
            coll::AllreduceAlgorithm::Ring);
}

}  // namespace
}  // namespace qccl
