#include "src/comm/cost_calibration.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "codecs/codec.h"
#include "collectives/chunk_codec.h"
#include "collectives/phase.h"
#include "collectives/pipeline.h"
#include "collectives/reduction.h"
#include "src/common/error.h"
#include "src/common/siphash.h"

namespace qccl {

namespace {

using Clock = std::chrono::steady_clock;

double secondsOf(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The median of `times` timings of body.
template <class Body>
double medianSeconds(int times, Body&& body) {
  std::vector<double> t(size_t(times), 0.0);
  for (double& s : t) {
    const Clock::time_point start = Clock::now();
    body();
    s = secondsOf(start);
  }
  std::nth_element(t.begin(), t.begin() + times / 2, t.end());
  return std::max(t[size_t(times / 2)], 1e-9);
}

uint64_t nameHash(const std::string& name) {
  constexpr uint8_t kKey[16] = {};  // a fingerprint, not a secret
  return sipHash24(kKey, name.data(), name.size());
}

}  // namespace

LinkCurve measureLink(coll::Context& context) {
  constexpr size_t kShortBytes = 64 << 10;
  const int n = context.group.size();
  LinkCurve link;
  link.nranks = n;
  const size_t largest = LinkCurve::probeBytes(n, LinkCurve::kPoints - 1);
  std::vector<uint8_t> out(largest, 0x5a), in(largest * size_t(n));
  auto exchange = [&](size_t bytes) {
    coll::exchangeWithAll(context, out.data(), bytes, in.data());
  };
  // Connections opened and their windows grown first, as the application's first calls will;
  // then every size back to back, as a training step's calls come (and short ones more often, to
  // see past the ranks' skew).
  exchange(largest);
  for (size_t point = 0; point < LinkCurve::kPoints; ++point) {
    const size_t bytes = LinkCurve::probeBytes(n, point);
    link.seconds[point] = medianSeconds(bytes <= kShortBytes ? 9 : 3, [&] { exchange(bytes); });
  }
  // A larger exchange is not faster than a smaller one: a faster reading is noise.
  for (size_t point = 1; point < LinkCurve::kPoints; ++point) {
    link.seconds[point] = std::max(link.seconds[point], link.seconds[point - 1]);
  }
  return link;
}

HostRates measureHostRates(const codec::CodecSpec& codec, size_t segmentElements) {
  const size_t count =
      coll::segmentStep(0, segmentElements ? segmentElements : 1 << 18, coll::chunkUnit(codec));
  // Gradient-like values: smooth with a spread of magnitudes, no zeros.
  std::vector<float> input(count), residual(count, 0.0f), acc(count, 0.0f), copy(count);
  for (size_t i = 0; i < count; ++i) {
    input[i] = std::sin(float(i) * 0.37f) * (1.0f + float(i % 97) * 0.05f) * 1e-3f;
  }
  std::vector<uint8_t> chunk(codec::encodedSize(codec, count, qcclFloat32));
  codec::EncodeParams params;
  params.seed = 1;
  params.residual = residual.data();
  HostRates rates;
  const double elements = double(count);
  rates.encode =
      elements / medianSeconds(3, [&] {
        codec::encode(codec, input.data(), count, qcclFloat32, chunk.data(), chunk.size(), params);
      });
  rates.decode =
      elements / medianSeconds(3, [&] {
        codec::decode(codec, chunk.data(), chunk.size(), acc.data(), count, qcclFloat32, true);
      });
  coll::Buffer sums(coll::hostAllocator());
  coll::Accumulator sum(qcclFloat32, qcclSum, count, sums);
  sum.add(input.data());
  rates.reduce = elements / medianSeconds(3, [&] { sum.add(input.data()); });
  rates.copy = elements / medianSeconds(3, [&] {
                 std::memcpy(copy.data(), input.data(), count * sizeof(float));
                 std::swap(copy, acc);  // a different destination each time: not a cached no-op
               });
  return rates;
}

void agreeOnCosts(coll::Context& context, const codec::CodecSpec& codec, CostInputs& in) {
  LinkCurve* const curves[] = {&in.link, &in.groupLink, &in.acrossLink};
  double* const rates[] = {&in.rates.encode, &in.rates.decode, &in.rates.reduce, &in.rates.copy};
  constexpr size_t kCurves = std::size(curves), kRates = std::size(rates);
  constexpr size_t kFigures = kCurves * LinkCurve::kPoints + kRates + 1;  // and the codec's hash
  std::array<double, kFigures> mine{};
  double* next = mine.data();
  for (const LinkCurve* c : curves)
    next = std::copy(c->seconds, c->seconds + LinkCurve::kPoints, next);
  for (const double* r : rates) *next++ = *r;
  const uint64_t hash = nameHash(codec::codecName(codec));
  std::memcpy(next, &hash, sizeof hash);
  const size_t n = size_t(context.group.size());
  std::vector<std::array<double, kFigures>> all(n);
  coll::exchangeWithAll(context, mine.data(), sizeof mine, reinterpret_cast<uint8_t*>(all.data()));
  all[size_t(context.group.me)] = mine;
  for (size_t p = 0; p < n; ++p) {
    const double* theirs = all[p].data();
    if (std::memcmp(theirs + kFigures - 1, &hash, sizeof hash) != 0) {
      throwError(qcclInvalidUsage,
                 "QCCL_MIN_BYTES=auto: rank %d measures codec %s's costs with a different codec",
                 context.group.ranks[p], codec::codecName(codec).c_str());
    }
    for (LinkCurve* c : curves) {
      for (double& s : c->seconds) s = std::max(s, *theirs++);
    }
    for (double* r : rates) *r = std::min(*r, *theirs++);
  }
}

}  // namespace qccl
