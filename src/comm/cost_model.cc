#include "src/comm/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "codecs/codec.h"
#include "collectives/allreduce_impl.h"
#include "collectives/call_agreement.h"
#include "collectives/chunk_codec.h"
#include "collectives/exact_pipeline.h"
#include "collectives/messages.h"
#include "collectives/partition.h"
#include "collectives/pipeline.h"
#include "collectives/reduction.h"

namespace qccl {

namespace {

// A chunk of `count` elements as the pipelined collectives send it: segments of whole codec
// blocks, each its own encoded chunk.
struct ChunkCost {
  size_t bytes = 0;
  size_t segments = 0;
};

ChunkCost chunkCost(const CostInputs& in, const codec::CodecSpec& codec, size_t count,
                    qcclDataType_t dtype) {
  const size_t step = coll::segmentStep(count, in.segmentElements, coll::chunkUnit(codec));
  ChunkCost c;
  const size_t whole = count / step, rest = count % step;
  if (whole > 0) c.bytes += whole * codec::encodedSize(codec, step, dtype);
  if (rest > 0) c.bytes += codec::encodedSize(codec, rest, dtype);
  c.segments = whole + (rest > 0 ? 1 : 0);
  return c;
}

// Pipelined calls (compressed ones, large exact ones) overlap their CPU work with their exchanges
// but for one segment's worth of the smaller of the two; the others do one after the other.
Prediction combine(double fixedSeconds, double wireSeconds, size_t wireBytes, double cpuSeconds,
                   size_t segments) {
  Prediction p;
  p.wireBytes = wireBytes;
  p.wireSeconds = wireSeconds;
  p.cpuSeconds = cpuSeconds;
  const double longer = std::max(wireSeconds, cpuSeconds);
  const double shorter = std::min(wireSeconds, cpuSeconds);
  p.seconds =
      fixedSeconds + (segments == 0 ? longer + shorter : longer + shorter / double(segments));
  return p;
}

}  // namespace

size_t LinkCurve::probeBytes(int nranks, size_t point) {
  static constexpr size_t kBytes[kPoints] = {8, 4 << 10, 16 << 10, 64 << 10, 512 << 10, 4 << 20};
  constexpr size_t kMaxPerRank = size_t(8) << 20;
  const size_t cap = std::max<size_t>(kMaxPerRank / size_t(std::max(nranks - 1, 1)), 64);
  return std::min(kBytes[point], cap);
}

double LinkCurve::bytesPerSecond() const {
  // From the first point to the last: one slow exchange in between (a stall) cannot skew it.
  const size_t a = probeBytes(nranks, 0), b = probeBytes(nranks, kPoints - 1);
  const double dt = seconds[kPoints - 1] - seconds[0];
  const double peers = double(nranks - 1);
  if (b <= a || dt <= 0) return peers * double(b) / seconds[kPoints - 1];
  return peers * double(b - a) / dt;
}

double LinkCurve::exchangeSeconds(size_t bytesPerPeer) const {
  if (nranks <= 1) return 0;  // no peers: nothing is exchanged
  size_t lo = 0;
  while (lo + 1 < kPoints && probeBytes(nranks, lo + 1) <= bytesPerPeer) ++lo;
  const size_t x0 = probeBytes(nranks, lo);
  if (bytesPerPeer <= x0) return seconds[lo];
  if (lo + 1 == kPoints) {
    return seconds[lo] + double(bytesPerPeer - x0) * double(nranks - 1) / bytesPerSecond();
  }
  const size_t x1 = probeBytes(nranks, lo + 1);
  const double f = double(bytesPerPeer - x0) / double(x1 - x0);
  return seconds[lo] + f * (seconds[lo + 1] - seconds[lo]);
}

namespace {

// The bytes sra's busiest rank (the owner of the first, largest chunk) sends: every peer's chunk
// to it, then its own reduced chunk to every peer.
size_t sraSentBytes(const CostInputs& in, size_t count, qcclDataType_t dtype,
                    const codec::CodecSpec& codec) {
  const std::vector<coll::Span> spans = coll::partition(count, in.nranks, coll::chunkUnit(codec));
  size_t bytes = (size_t(in.nranks) - 1) * chunkCost(in, codec, spans[0].size(), qcclFloat32).bytes;
  for (size_t p = 1; p < spans.size(); ++p)
    bytes += chunkCost(in, codec, spans[p].size(), dtype).bytes;
  return bytes;
}

// sra: each peer's chunk encoded and sent to it, the own chunk reduced, encoded once and sent
// to every peer; every chunk decoded (docs/ALGORITHMS.md). The busiest rank owns the first
// (largest) chunk.
Prediction sraAllreduce(const CostInputs& in, size_t count, qcclDataType_t dtype,
                        const codec::CodecSpec& codec) {
  const size_t n = size_t(in.nranks);
  const HostRates& r = in.rates;
  const size_t own = coll::partition(count, in.nranks, coll::chunkUnit(codec))[0].size();
  const ChunkCost mine = chunkCost(in, codec, own, qcclFloat32);
  const double cpu =
      double(count) / r.encode + double((n - 1) * own + count) / r.decode + double(own) / r.reduce;
  return combine(in.link.exchangeSeconds(coll::kCallDescriptionBytes),
                 2 * in.link.exchangeSeconds(mine.bytes),
                 (n - 1) * coll::kCallDescriptionBytes + sraSentBytes(in, count, dtype, codec), cpu,
                 mine.segments);
}

// gather: the whole vector encoded once and sent to every peer; all n chunks decoded and added.
Prediction gatherAllreduce(const CostInputs& in, size_t count, qcclDataType_t dtype,
                           const codec::CodecSpec& codec) {
  const size_t n = size_t(in.nranks);
  const HostRates& r = in.rates;
  const ChunkCost whole = chunkCost(in, codec, count, dtype);
  const double cpu =
      double(count) / r.encode + double(n * count) / r.decode + double(count) / r.copy;
  return combine(in.link.exchangeSeconds(coll::kCallDescriptionBytes),
                 in.link.exchangeSeconds(whole.bytes),
                 (n - 1) * (coll::kCallDescriptionBytes + whole.bytes), cpu, whole.segments);
}

// ring: 2(n-1) steps, each waiting for the one before: a chunk to the right neighbour (as many
// bytes out as an exchange of chunk / (n-1) with every peer), decoded, added and re-encoded in
// the reduce-scatter half, forwarded as it is in the allgather half; every chunk decoded at the
// end. Rank r sends every chunk but r+1 in the first half and every chunk but r+2 in the second.
Prediction ringAllreduce(const CostInputs& in, size_t count, const codec::CodecSpec& codec) {
  const size_t n = size_t(in.nranks);
  const HostRates& r = in.rates;
  const std::vector<coll::Span> spans = coll::partition(count, in.nranks, coll::chunkUnit(codec));
  std::vector<size_t> bytes(n);
  size_t total = 0;
  for (size_t c = 0; c < n; ++c)
    total += bytes[c] = codec::encodedSize(codec, spans[c].size(), qcclFloat32);
  size_t busiest = 0;
  for (size_t me = 0; me < n; ++me) {
    busiest = std::max(busiest, 2 * total - bytes[(me + 1) % n] - bytes[(me + 2) % n]);
  }
  const size_t step = bytes[0];
  const double wire = 2 * double(n - 1) * in.link.exchangeSeconds(step / (n - 1));
  const double perChunk = double(spans[0].size());
  const double cpu = double(count) / r.copy + double(n - 1) * perChunk / r.encode +
                     double(n - 1) * perChunk * (1 / r.decode + 1 / r.copy) + perChunk / r.encode +
                     double(count) / r.decode;
  return combine(0, wire, busiest, cpu, 0);
}

// hier: an exact reduce-scatter of fp32 slices inside the group, sra of the slice across groups
// (among the ranks holding it), an exact allgather inside the group, one after the other. The
// busiest rank holds the first (largest) slice in the first group.
Prediction hierAllreduce(const CostInputs& in, size_t count, const codec::CodecSpec& codec) {
  const size_t g = size_t(in.groupSize);
  const HostRates& r = in.rates;
  const std::vector<coll::Span> slices =
      coll::partition(count, in.groupSize, coll::chunkUnit(codec));
  const size_t mine = slices[0].size(), message = 4 * mine + coll::kExactHeaderBytes;
  CostInputs across = in;
  across.nranks = in.nranks / in.groupSize;
  across.link = in.acrossLink;
  const Prediction inter =  // one group: its slice is the sum already
      across.nranks > 1 ? sraAllreduce(across, mine, qcclFloat32, codec) : Prediction{};
  const size_t inside = (4 * (count - mine) + (g - 1) * coll::kExactHeaderBytes) +
                        (g - 1) * message;  // slices out, then the reduced slice to every member
  const double cpu = double(3 * count + 2 * (g - 1) * mine) / r.copy + double(g * mine) / r.reduce;
  Prediction p = combine(0, 2 * in.groupLink.exchangeSeconds(message), inside, cpu, 0);
  p.seconds += inter.seconds;
  p.wireSeconds += inter.wireSeconds;
  p.cpuSeconds += inter.cpuSeconds;
  p.wireBytes += inter.wireBytes;
  return p;
}

}  // namespace

Prediction predictExact(const CostInputs& in, CollectiveKind kind, size_t count,
                        qcclDataType_t dtype) {
  const size_t n = size_t(in.nranks), width = coll::dataTypeSize(dtype);
  const HostRates& r = in.rates;
  // A pipelined call (coll::exactSegmentStep) agrees on its shape first, sends raw segments
  // without headers or staging copies, and overlaps its reductions with its exchanges.
  const double agreement = in.link.exchangeSeconds(coll::kCallDescriptionBytes);
  const size_t agreementBytes = (n - 1) * coll::kCallDescriptionBytes;
  auto segments = [&](size_t chunk) {
    const size_t step = coll::exactSegmentStep(chunk, width, in.segmentElements);
    return step == 0 ? 0 : (chunk + step - 1) / step;
  };
  switch (kind) {
    case CollectiveKind::AllReduce: {
      // Doubling and halving swap with one peer per round. The link curve is measured with every
      // peer at once: a swap counts as one of that exchange's n - 1 messages (the same bytes per
      // second, 1/(n - 1) of its latency).
      auto swapSeconds = [&](size_t bytes) {
        return in.link.exchangeSeconds(bytes) / double(n - 1);
      };
      if (coll::exactAllreduceByDoubling(count, dtype, in.nranks)) {
        // log2 n swaps of a whole partial result, each rank combining two.
        const size_t rounds = coll::doublingRounds(in.nranks);
        const size_t message = count * width + coll::kExactHeaderBytes;
        const double cpu = double(count) / r.copy + double(2 * rounds * count) / r.reduce;
        return combine(0, double(rounds) * swapSeconds(message), rounds * message, cpu, 0);
      }
      if (coll::exactAllreduceByHalving(count, dtype, in.nranks)) {
        // log2 n swaps of halves (framed), then log2 n back (raw); the last rank keeps the upper,
        // longer halves and sends the most.
        const std::vector<coll::Span> held = coll::halvingSpans(count, in.nranks, in.nranks - 1);
        size_t wire = 0;
        double swaps = 0;
        for (size_t k = 0; k + 1 < held.size(); ++k) {
          const size_t give = held[k].size() - held[k + 1].size();
          wire += coll::kExactHeaderBytes + held[k].size() * width;
          swaps += swapSeconds(coll::kExactHeaderBytes + give * width) +
                   swapSeconds(held[k + 1].size() * width);
        }
        const double cpu = double(count) / r.copy + double(2 * count) / r.reduce;
        return combine(0, swaps, wire, cpu, 0);
      }
      if (coll::exactAllreduceInOneRound(count * width, in.nranks)) {
        // One exchange of whole vectors, each rank summing all of them.
        const size_t message = count * width + coll::kExactHeaderBytes;
        const double cpu = double(count) / r.copy + double(n * count) / r.reduce;
        return combine(0, in.link.exchangeSeconds(message), (n - 1) * message, cpu, 0);
      }
      // Two exchanges: contributions to their owners, results from them; the busiest rank owns
      // the first (largest) span.
      const size_t mine = coll::partition(count, in.nranks, 1)[0].size(), others = count - mine;
      const size_t values = (others + (n - 1) * mine) * width;
      if (const size_t k = segments(mine)) {
        return combine(agreement, 2 * in.link.exchangeSeconds(mine * width),
                       agreementBytes + values, double(n * mine) / r.reduce, k);
      }
      const size_t message = mine * width + coll::kExactHeaderBytes;
      const size_t wire = values + 2 * (n - 1) * coll::kExactHeaderBytes;
      const double cpu = double(others + (n - 1) * mine) / r.copy + double(n * mine) / r.reduce;
      return combine(0, 2 * in.link.exchangeSeconds(message), wire, cpu, 0);
    }
    case CollectiveKind::ReduceScatter: {
      if (const size_t k = segments(count)) {
        return combine(agreement, in.link.exchangeSeconds(count * width),
                       agreementBytes + (n - 1) * count * width, double(n * count) / r.reduce, k);
      }
      const size_t message = count * width + coll::kExactHeaderBytes;
      const double cpu = double((n - 1) * count) / r.copy + double(n * count) / r.reduce;
      return combine(0, in.link.exchangeSeconds(message), (n - 1) * message, cpu, 0);
    }
    case CollectiveKind::AllGather: {
      if (const size_t k = segments(count)) {
        return combine(agreement, in.link.exchangeSeconds(count * width),
                       agreementBytes + (n - 1) * count * width, double(count) / r.copy, k);
      }
      const size_t message = count * width + coll::kExactHeaderBytes;
      const double cpu = double((n + 1) * count) / r.copy;
      return combine(0, in.link.exchangeSeconds(message), (n - 1) * message, cpu, 0);
    }
  }
  return {};
}

Prediction predictCompressed(const CostInputs& in, CollectiveKind kind, size_t count,
                             qcclDataType_t dtype, const codec::CodecSpec& codec) {
  const size_t n = size_t(in.nranks);
  const HostRates& r = in.rates;
  // Every compressed call first agrees on its shape: one small exchange.
  const double agreement = in.link.exchangeSeconds(coll::kCallDescriptionBytes);
  const size_t agreementBytes = (n - 1) * coll::kCallDescriptionBytes;
  switch (kind) {
    case CollectiveKind::AllReduce:
      if (in.algorithm == coll::AllreduceAlgorithm::Ring) return ringAllreduce(in, count, codec);
      if (compressedAllreduceAlgorithm(in.algorithm, in.nranks, in.segmentElements, count, dtype,
                                       codec) == coll::AllreduceAlgorithm::Gather) {
        return gatherAllreduce(in, count, dtype, codec);
      }
      if (in.algorithm == coll::AllreduceAlgorithm::Hier && in.groupSize > 0) {
        return hierAllreduce(in, count, codec);
      }
      return sraAllreduce(in, count, dtype, codec);
    case CollectiveKind::ReduceScatter: {
      const ChunkCost share = chunkCost(in, codec, count, dtype);
      const double cpu = double((n - 1) * count) / r.encode + double((n - 1) * count) / r.decode +
                         double(count) / r.reduce + double(count) / r.copy;
      return combine(agreement, in.link.exchangeSeconds(share.bytes),
                     agreementBytes + (n - 1) * share.bytes, cpu, share.segments);
    }
    case CollectiveKind::AllGather: {
      const ChunkCost shard = chunkCost(in, codec, count, dtype);
      const double cpu = double(count) / r.encode + double(n * count) / r.decode;
      return combine(agreement, in.link.exchangeSeconds(shard.bytes),
                     agreementBytes + (n - 1) * shard.bytes, cpu, shard.segments);
    }
  }
  return {};
}

coll::AllreduceAlgorithm compressedAllreduceAlgorithm(coll::AllreduceAlgorithm configured,
                                                      int nranks, size_t segmentElements,
                                                      size_t count, qcclDataType_t dtype,
                                                      const codec::CodecSpec& codec) {
  if (configured != coll::AllreduceAlgorithm::Sra || codec.format != codec::Format::TopK ||
      nranks < 2) {
    return configured;
  }
  CostInputs in;
  in.nranks = nranks;
  in.segmentElements = segmentElements;
  const size_t gather = size_t(nranks - 1) * chunkCost(in, codec, count, dtype).bytes;
  return gather <= sraSentBytes(in, count, dtype, codec) ? coll::AllreduceAlgorithm::Gather
                                                         : configured;
}

size_t crossoverBytes(const CostInputs& in, CollectiveKind kind, qcclDataType_t dtype,
                      const codec::CodecSpec& codec) {
  const size_t width = coll::dataTypeSize(dtype);
  const size_t perCount = width * (kind == CollectiveKind::AllReduce ? 1 : size_t(in.nranks));
  // A margin for the model's error: compressed only where it is predicted clearly faster, so that
  // near the crossover, where the two are close, calls stay exact (and keep their exact numerics).
  constexpr double kMargin = 0.9;
  auto compressedWins = [&](size_t bytes) {
    const size_t count = std::max<size_t>(bytes / perCount, 1);
    return predictCompressed(in, kind, count, dtype, codec).seconds <
           kMargin * predictExact(in, kind, count, dtype).seconds;
  };
  // The smallest power of two from which every larger one wins, then the first winning size
  // between it and the power below (the two curves cross once there).
  constexpr int kFirst = 6, kLast = 40;
  int from = kLast + 1;
  for (int k = kLast; k >= kFirst && compressedWins(size_t(1) << k); --k) from = k;
  if (from > kLast) return SIZE_MAX;
  if (from == kFirst) return 0;
  size_t lo = size_t(1) << (from - 1), hi = size_t(1) << from;  // lo loses, hi wins
  while (hi - lo > perCount) {
    const size_t mid = lo + (hi - lo) / 2;
    (compressedWins(mid) ? hi : lo) = mid;
  }
  return hi / perCount * perCount;
}

}  // namespace qccl
