// Inputs, exact references and error bounds for the collective tests. Every rank's input is a
// deterministic function of (rank, index), so any process can compute every rank's data and the
// exact result without communicating.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "codecs/codec_spec.h"
#include "codecs/element/minifloat.h"
#include "collectives/partition.h"
#include "qccl/qccl.h"
#include "tests/unit/codec_test_util.h"

namespace qccl::test {

inline size_t typeBytes(qcclDataType_t t) {
  switch (t) {
    case qcclFloat32:
    case qcclInt32: return 4;
    case qcclBfloat16:
    case qcclFloat16: return 2;
    default: return 8;
  }
}

// A smooth signal with a rank-dependent frequency, phase and scale, plus an occasional spike:
// block scales vary, nothing is degenerate.
inline double rawValue(int rank, size_t i) {
  const double x = std::sin(0.0013 * double(i + 1) * (rank + 1) + rank) * (1.0 + 0.25 * rank);
  return (i * 2654435761u + uint64_t(rank)) % 997 == 0 ? 6.0 * x : x;
}

// The input as stored in dtype, and its value as a double (after rounding to dtype).
inline void makeInput(int rank, size_t count, qcclDataType_t dtype, std::vector<uint8_t>& bytes,
                      std::vector<double>& values) {
  bytes.resize(count * typeBytes(dtype));
  values.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const double v = rawValue(rank, i);
    switch (dtype) {
      case qcclInt32: {
        const int32_t q = int32_t(std::lround(v * 1000.0)) + rank;
        std::memcpy(bytes.data() + 4 * i, &q, 4);
        values[i] = q;
        break;
      }
      case qcclFloat32: {
        const float f = float(v);
        std::memcpy(bytes.data() + 4 * i, &f, 4);
        values[i] = f;
        break;
      }
      case qcclBfloat16: {
        const uint16_t h = uint16_t(encodeRne<Bf16>(float(v)));
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        values[i] = decode<Bf16>(h);
        break;
      }
      default: {  // fp16
        const uint16_t h = uint16_t(encodeRne<Fp16>(float(v)));
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        values[i] = decode<Fp16>(h);
        break;
      }
    }
  }
}

inline double readValue(const uint8_t* bytes, qcclDataType_t dtype, size_t i) {
  switch (dtype) {
    case qcclInt32: {
      int32_t q;
      std::memcpy(&q, bytes + 4 * i, 4);
      return q;
    }
    case qcclFloat32: {
      float f;
      std::memcpy(&f, bytes + 4 * i, 4);
      return f;
    }
    case qcclBfloat16: {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      return decode<Bf16>(h);
    }
    default: {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      return decode<Fp16>(h);
    }
  }
}

// Half an ulp of the output dtype at v (0 for fp32 and integers: fp32 rounding is in the slack).
inline double outputRounding(qcclDataType_t dtype, double v) {
  if (dtype == qcclBfloat16) return std::ldexp(std::fabs(v), -8) + 1e-38;
  if (dtype == qcclFloat16) return std::ldexp(std::fabs(v), -11) + std::ldexp(1.0, -25);
  return 0;
}

struct OwnedSpan {
  coll::Span span;
  int owner;  // index into the contributions
};

// Per-element bound on |result - exact sum| of a compressed scatter-reduce-allgather (first call:
// zero residuals) of `contributions`: the owner of each chunk adds the others' decoded chunks
// (each within its codec bound, docs/CODECS.md) to its own, then the sum is encoded once more.
inline std::vector<double> scatterReduceBound(const codec::CodecSpec& spec,
                                              const std::vector<std::vector<double>>& contributions,
                                              const std::vector<OwnedSpan>& chunks) {
  const size_t count = contributions[0].size();
  std::vector<double> bound(count, 0.0);
  const size_t block = spec.block ? spec.block : count + 1;
  for (const OwnedSpan& c : chunks) {
    for (size_t start = c.span.begin; start < c.span.end; start += block) {
      const size_t end = std::min(c.span.end, start + block);
      std::vector<double> worker(end - start, 0.0), sum(end - start, 0.0);
      for (size_t p = 0; p < contributions.size(); ++p) {
        double amax = 0;
        for (size_t i = start; i < end; ++i) amax = std::max(amax, std::fabs(contributions[p][i]));
        for (size_t i = start; i < end; ++i) {
          sum[i - start] += contributions[p][i];
          if (int(p) != c.owner)
            worker[i - start] += elementBound(spec, contributions[p][i], amax, amax);
        }
      }
      double sumAmax = 0, workerMax = 0;
      for (size_t k = 0; k < sum.size(); ++k) {
        sumAmax = std::max(sumAmax, std::fabs(sum[k]));
        workerMax = std::max(workerMax, worker[k]);
      }
      for (size_t k = 0; k < sum.size(); ++k) {
        double slack = 0;
        for (const auto& x : contributions) slack += 1e-6 * std::fabs(x[start + k]);
        bound[start + k] = worker[k] + slack +
                           elementBound(spec, std::fabs(sum[k]) + worker[k], sumAmax + workerMax,
                                        sumAmax + workerMax);
      }
    }
  }
  return bound;
}

// Per-element bound for the compressed ring: n - 1 hops each re-encode a partial sum, then the
// owner encodes the total. Every partial sum is bounded by the sum of magnitudes (and its block
// amax by the sum of the block amaxes), inflated by the errors before it: (1 + 2^-4 + margin)^n
// for the 8-bit formats this bound is meant for.
inline std::vector<double> ringBound(const codec::CodecSpec& spec,
                                     const std::vector<std::vector<double>>& contributions,
                                     const std::vector<coll::Span>& chunks) {
  const size_t count = contributions[0].size(), n = contributions.size();
  const double inflation = std::pow(1.07, double(n));
  std::vector<double> bound(count, 0.0);
  const size_t block = spec.block ? spec.block : count + 1;
  for (const coll::Span& c : chunks) {
    for (size_t start = c.begin; start < c.end; start += block) {
      const size_t end = std::min(c.end, start + block);
      double amax = 0;
      for (const auto& x : contributions) {
        double a = 0;
        for (size_t i = start; i < end; ++i) a = std::max(a, std::fabs(x[i]));
        amax += a;
      }
      for (size_t i = start; i < end; ++i) {
        double magnitude = 0;
        for (const auto& x : contributions) magnitude += std::fabs(x[i]);
        bound[i] = double(n) *
                   elementBound(spec, inflation * magnitude, inflation * amax, inflation * amax);
      }
    }
  }
  return bound;
}

}  // namespace qccl::test
