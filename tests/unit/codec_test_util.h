// Helpers for codec tests: data generators, one-call encode/decode on vectors, and the per-element
// error bounds derived in docs/CODECS.md ("Error bounds").
#pragma once

#include <cctype>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codecs/codec.h"
#include "codecs/element/hadamard.h"
#include "tests/test_names.h"

namespace qccl::test {

using codec::CodecSpec;
using codec::Format;

inline std::vector<float> gaussian(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

// Student-t with 3 degrees of freedom: heavy tails (finite variance, infinite kurtosis).
inline std::vector<float> studentT3(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::chi_squared_distribution<float> chi2(3.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng) / std::sqrt(chi2(rng) / 3.0f);
  return x;
}

inline std::vector<uint8_t> encodeVec(const CodecSpec& spec, const std::vector<float>& x,
                                      const codec::EncodeParams& params = {},
                                      const codec::KernelTable& kernels = codec::cpuKernels()) {
  std::vector<uint8_t> chunk(codec::encodedSize(spec, x.size(), qcclFloat32));
  codec::encode(spec, x.data(), x.size(), qcclFloat32, chunk.data(), chunk.size(), params, kernels);
  return chunk;
}

inline std::vector<float> decodeVec(const CodecSpec& spec, const std::vector<uint8_t>& chunk,
                                    size_t count,
                                    const codec::KernelTable& kernels = codec::cpuKernels()) {
  std::vector<float> y(count);
  codec::decode(spec, chunk.data(), chunk.size(), y.data(), count, qcclFloat32, false, kernels);
  return y;
}

inline double l2(const std::vector<float>& a) {
  double s = 0;
  for (float v : a) s += double(v) * v;
  return std::sqrt(s);
}

inline double l2Diff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s);
}

// Upper bound on |x - D(Q(x))| for element x of a block whose largest magnitude is blockAmax,
// in a chunk whose largest magnitude is chunkAmax, round to nearest (docs/CODECS.md). The
// 1e-6 |x| term covers the fp32 roundings of the scale arithmetic.
inline double roundToNearestBound(Format f, double x, double blockAmax, double chunkAmax) {
  const double a = std::fabs(x), A = blockAmax;
  double bound = 0;
  switch (f) {
    case Format::None: return 0;
    case Format::Bf16: bound = std::ldexp(a, -8) + std::ldexp(1.0, -134); break;
    case Format::Fp16: bound = std::ldexp(a, -11) + std::ldexp(1.0, -25); break;
    case Format::Fp8E4M3: bound = std::ldexp(a, -4) + std::ldexp(A / 448, -10); break;
    case Format::Fp8E5M2: bound = std::ldexp(a, -3) + std::ldexp(A / 57344, -17); break;
    case Format::Int8: bound = 0.5 * A / 127; break;
    case Format::Int4: bound = 0.5 * A / 7; break;
    case Format::Int2:
      bound = 0.5 * A / 1.5;
      break;  // levels s = A / 1.5 apart, none clipped
    // MX: 2^e < 2 A / elem_max.
    case Format::MxFp8: bound = std::ldexp(a, -4) + std::ldexp(2 * A / 448, -10); break;
    case Format::MxFp4: bound = 0.25 * a + 0.25 * (2 * A / 6); break;
    // nvfp4: decoded block scale d <= (17/16) A / 6 while E4M3 is normal; |x / d| <= 6.4, so
    // rounding costs 0.25 |x| (or 0.25 d below 1) and clipping at 6 at most 0.4 d.
    case Format::NvFp4: bound = 0.25 * a + 0.4 * (17.0 / 16) * A / 6; break;
    // fp4ue5m3: scale S is the smallest UE5M3 >= A / 6, so S <= (9/8) A / 6 + 2^-17; no clipping.
    case Format::Fp4Ue5m3:
      bound = 0.25 * a + 0.25 * ((9.0 / 8) * A / 6 + std::ldexp(1.0, -17));
      break;
    case Format::Sign1: bound = a + A; break;  // checked exactly elsewhere
    case Format::TopK: return 0;  // no per-element bound: tests/unit/topk_codec_test.cc
  }
  (void)chunkAmax;
  return bound + 1e-6 * a + 1e-38;
}

// Stochastic rounding lands on one of the two neighbours: at most one quantum, twice the bound.
inline double elementBound(const CodecSpec& spec, double x, double blockAmax, double chunkAmax) {
  const double b = roundToNearestBound(spec.format, x, blockAmax, chunkAmax);
  return spec.stochastic ? 2 * b : b;
}

// The values the quantizer sees: x itself, or x rotated run by run for +rht.
inline std::vector<float> quantizerDomain(const CodecSpec& spec, const std::vector<float>& x,
                                          uint64_t seed) {
  if (!spec.rhtSize) return x;
  std::vector<float> y(x);
  y.resize((x.size() + spec.rhtSize - 1) / spec.rhtSize * spec.rhtSize, 0.0f);
  const RhtSigns signs = rhtSigns(seed);
  for (size_t r = 0; r < y.size(); r += spec.rhtSize) rhtForward(y.data() + r, spec.rhtSize, signs);
  return y;
}

// Per-element bounds over the quantizer's domain.
inline std::vector<double> bounds(const CodecSpec& spec, const std::vector<float>& y) {
  const size_t block = spec.block ? spec.block : y.size() + 1;
  double chunkAmax = 0;
  for (float v : y) chunkAmax = std::max(chunkAmax, double(std::fabs(v)));
  std::vector<double> b(y.size());
  for (size_t start = 0; start < y.size(); start += block) {
    const size_t end = std::min(y.size(), start + block);
    double amax = 0;
    for (size_t i = start; i < end; ++i) amax = std::max(amax, double(std::fabs(y[i])));
    for (size_t i = start; i < end; ++i) b[i] = elementBound(spec, y[i], amax, chunkAmax);
  }
  return b;
}

// A codec spec as a GoogleTest parameter name ("nvfp4+rht" -> "nvfp4_rht").
// For INSTANTIATE_TEST_SUITE_P over codec spec strings.
struct SpecName {
  template <class Info>
  std::string operator()(const Info& info) const {
    return specTestName(info.param);
  }
};

inline std::vector<std::string> allFormatSpecs() {
  return {"none",  "bf16",     "fp16", "fp8e4m3", "fp8e5m2", "mxfp8", "mxfp4",
          "nvfp4", "fp4ue5m3", "int8", "int4",    "int2",    "sign1"};
}

}  // namespace qccl::test
