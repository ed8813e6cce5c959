// The encode/decode drivers, compiled once per CPU target: each target's .cc defines QCCL_ISA
// and includes this file, which defines that target's KernelTable. The drivers walk the chunk
// tile by tile (kernels.h): load and convert the input, add the error-feedback residual,
// rotate (+rht), draw the stochastic-rounding bits, quantize block by block, and for error
// feedback decode again to update the residual.
//
// No std templates in here: every instantiation must stay inside this target's namespace.
#pragma once

#ifndef QCCL_ISA
#error "define QCCL_ISA before including kernels_impl.h"
#endif

#include "codecs/cpu/hadamard_vec.h"
#include "codecs/cpu/kernels.h"
#include "codecs/cpu/lanes.h"
#include "codecs/cpu/philox_vec.h"
#include "codecs/cpu/quantizers.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace kernels {

using codec::DecodeJob;
using codec::EncodeJob;
using codec::Format;
using quant::ChunkContext;

// ---- dtype conversion at the edges of a tile -------------------------------------------------

inline void loadFloats(const void* src, qcclDataType_t type, size_t n, float* dst) {
  if (type == qcclFloat32) {
    std::memcpy(dst, src, 4 * n);
  } else if (type == qcclBfloat16) {
    const uint16_t* s = static_cast<const uint16_t*>(src);
    for (size_t i = 0; i < n; ++i) dst[i] = decode<Bf16>(s[i]);
  } else {
    const uint16_t* s = static_cast<const uint16_t*>(src);
    for (size_t i = 0; i < n; ++i) dst[i] = decode<Fp16>(s[i]);
  }
}

inline void storeFloats(const float* src, size_t n, void* dst, qcclDataType_t type) {
  if (type == qcclFloat32) {
    std::memcpy(dst, src, 4 * n);
  } else if (type == qcclBfloat16) {
    uint16_t* d = static_cast<uint16_t*>(dst);
    for (size_t i = 0; i < n; ++i) d[i] = uint16_t(encodeRne<Bf16>(src[i]));
  } else {
    uint16_t* d = static_cast<uint16_t*>(dst);
    for (size_t i = 0; i < n; ++i) d[i] = uint16_t(encodeRne<Fp16>(src[i]));
  }
}

inline size_t typeBytes(qcclDataType_t type) { return type == qcclFloat32 ? 4 : 2; }

inline const void* advance(const void* p, size_t elements, qcclDataType_t type) {
  return static_cast<const uint8_t*>(p) + elements * typeBytes(type);
}

inline void* advance(void* p, size_t elements, qcclDataType_t type) {
  return static_cast<uint8_t*>(p) + elements * typeBytes(type);
}

// ---- tile stages --------------------------------------------------------------------------------

// Adds n residual values of type (fp32 or bf16), times the decay, to dst: dst + (decay * e), two
// roundings (the build contracts no multiply-add); decay 1 gives dst + e bit for bit.
inline void addResidual(const void* residual, qcclDataType_t type, float decay, size_t n,
                        float* dst) {
  if (type == qcclFloat32) {
    const float* __restrict e = static_cast<const float*>(residual);
    for (size_t i = 0; i < n; ++i) dst[i] += decay * e[i];
  } else {
    const uint16_t* e = static_cast<const uint16_t*>(residual);
    for (size_t i = 0; i < n; ++i) dst[i] += decay * decode<Bf16>(e[i]);
  }
}

// The tile's values to quantize: input (+ decayed residual), zeros beyond the input, rotated when
// +rht, prepared in x; or, for plain fp32 input, the input itself. With error feedback the
// unrotated x + residual is what the residual update needs: x itself without +rht, else a copy in
// p. Decay 0 reads no residual: p = x exactly (x + 0 * e would turn an input -0 into +0).
inline const float* prepareTile(const EncodeJob& job, size_t start, size_t n, const RhtRuns& runs,
                                float* x, float* p) {
  if (job.inputType == qcclFloat32 && !job.residual && !job.spec.rhtSize) {
    return static_cast<const float*>(job.input) + start;  // no rhtSize: no padding either
  }
  const size_t valid = start < job.count ? (n < job.count - start ? n : job.count - start) : 0;
  const void* input = advance(job.input, start, job.inputType);
  const void* residual =
      job.residual && job.residualDecay != 0.0f
          ? advance(static_cast<const void*>(job.residual), start, job.residualType)
          : nullptr;
  if (residual && job.inputType == qcclFloat32 && job.residualType == qcclFloat32) {
    // The collectives' case, in one pass instead of a copy and an add.
    const float* __restrict in = static_cast<const float*>(input);
    const float* __restrict e = static_cast<const float*>(residual);
    const float decay = job.residualDecay;
    for (size_t i = 0; i < valid; ++i) x[i] = in[i] + decay * e[i];
  } else {
    loadFloats(input, job.inputType, valid, x);
    if (residual) addResidual(residual, job.residualType, job.residualDecay, valid, x);
  }
  for (size_t i = valid; i < n; ++i) x[i] = 0.0f;
  if (runs.size) {
    if (job.residual) std::memcpy(p, x, 4 * valid);
    rotateTile(x, n, runs, true);
  }
  return x;
}

// Stochastic-rounding bits of stream elements [first, first + n).
inline void drawRandomBits(const EncodeJob& job, uint64_t first, size_t n, uint32_t* bits) {
  size_t i = 0;
  for (; i < n && (first + i) % 4 != 0; ++i) {  // head up to a whole Philox block
    bits[i] =
        stochasticRoundingBlock(job.seed, job.rank, job.call, (first + i) / 4).v[(first + i) % 4];
  }
  const size_t groups = (n - i) / 4;
  stochasticRoundingBlocks(job.seed, job.rank, job.call, (first + i) / 4, groups, bits + i);
  for (i += 4 * groups; i < n; ++i) {
    bits[i] =
        stochasticRoundingBlock(job.seed, job.rank, job.call, (first + i) / 4).v[(first + i) % 4];
  }
}

// Residual update from the decoded tile, in place: e = p - D(Q(p)) wherever the decoded value is
// finite (a non-finite block decodes to NaN and leaves its residual untouched).
inline void updateResidual(const EncodeJob& job, size_t start, size_t valid, const float* p,
                           const float* decoded) {
  auto finite = [](float v) { return !quant::isNonFinite(floatBits(v) & kAbsMask); };
  if (job.residualType == qcclFloat32) {
    float* __restrict e = static_cast<float*>(job.residual) + start;
    for (size_t i = 0; i < valid; ++i) e[i] = finite(decoded[i]) ? p[i] - decoded[i] : e[i];
  } else {
    uint16_t* e = static_cast<uint16_t*>(job.residual) + start;
    for (size_t i = 0; i < valid; ++i) {
      e[i] = finite(decoded[i]) ? uint16_t(encodeRne<Bf16>(p[i] - decoded[i])) : e[i];
    }
  }
}

// Calls fn(index, offset, length) for each block of a tile of n elements. With kBlock != 0
// (== block) the full blocks' length is that compile-time constant. The index is counted, not
// divided out of the offset: a division by a run-time block size per block of 16 elements costs
// as much as the block's arithmetic.
template <size_t kBlock, class Fn>
QCCL_ALWAYS_INLINE void forEachBlock(size_t n, size_t block, Fn&& fn) {
  const size_t full = n / block;
  for (size_t k = 0; k < full; ++k) fn(k, k * block, kBlock ? kBlock : block);
  if (n % block) fn(full, full * block, n % block);
}

// out[i] = in[i] / factor (kDivide) or in[i] * factor, a whole vector register at a time where
// the target has them: the compiler leaves a short block's loop scalar, unrolled, when it cannot
// prove that in and out do not overlap. Division and product are IEEE-exact per lane, as in the
// scalar loop.
template <bool kDivide>
QCCL_ALWAYS_INLINE void scaleBlock(const float* in, size_t len, float factor, float* out) {
  size_t i = 0;
#if defined(__AVX2__)
  constexpr size_t kLanes = sizeof(FloatLanes) / 4;
  const FloatLanes f = FloatLanes{} + factor;
  for (; i + kLanes <= len; i += kLanes) {
    FloatLanes v;
    std::memcpy(&v, in + i, sizeof v);
    v = kDivide ? v / f : v * f;
    std::memcpy(out + i, &v, sizeof v);
  }
#endif
  for (; i < len; ++i) out[i] = kDivide ? in[i] / factor : in[i] * factor;
}

template <size_t N>
struct BlockSize {
  static constexpr size_t value = N;
};

// Runs body(BlockSize<kBlock>) with kBlock = the quantizer's default block when the job uses it
// (the common case, specialised), else 0 (any block size).
template <class Q, class Body>
QCCL_ALWAYS_INLINE void withBlockSize(size_t block, Body&& body) {
  if constexpr (Q::kDefaultBlock != 0) {
    if (block == Q::kDefaultBlock) return body(BlockSize<Q::kDefaultBlock>{});
  }
  body(BlockSize<0>{});
}

// Decodes a tile into out: the blocks' factors, then block by block codes times factor.
template <class Q, size_t kBlock>
void decodeTileBlocks(const uint8_t* scales, const uint8_t* elements, size_t start, size_t n,
                      size_t block, const ChunkContext& chunk, float* factors, float* out) {
  if constexpr (Q::kScaleBytes == 0) {
    Q::decodeCodes(elements + start * Q::kElementBits / 8, n, 1.0f, out);
  } else {
    Q::decodeScales(scales + start / block * Q::kScaleBytes, quant::blockCount(n, block), chunk,
                    factors);
    forEachBlock<kBlock>(n, block, [&](size_t k, size_t b, size_t len) QCCL_ALWAYS_INLINE_LAMBDA {
      Q::decodeCodes(elements + (start + b) * Q::kElementBits / 8, len, factors[k], out + b);
    });
  }
}

template <class Q>
void decodeBlocks(const codec::CodecSpec& spec, const uint8_t* scales, const uint8_t* elements,
                  size_t start, size_t n, const ChunkContext& chunk, float* factors, float* out) {
  const size_t block = spec.block ? spec.block : n;
  withBlockSize<Q>(block, [&](auto kBlock) {
    decodeTileBlocks<Q, decltype(kBlock)::value>(scales, elements, start, n, block, chunk, factors,
                                                 out);
  });
}

// Encodes a tile: the blocks' scales (vectorised across blocks), the values scaled by their
// block's factor into `scaled`, then all codes in one pass. A non-finite block (factor NaN) gets
// zero elements, so its bytes are the same on every target and the GPU.
template <class Q, bool kStochastic, size_t kBlock>
void encodeTileBlocks(const EncodeJob& job, const float* x, const uint32_t* random, size_t start,
                      size_t n, size_t block, const ChunkContext& chunk, float* factors,
                      float* scaled) {
  uint8_t* elements = job.elements + start * Q::kElementBits / 8;
  Q::encodeScales(x, n, block, chunk, job.scales + start / block * Q::kScaleBytes, factors);
  const float* t = x;
  if constexpr (Q::kScalesElements) {
    forEachBlock<kBlock>(n, block, [&](size_t k, size_t b, size_t len) QCCL_ALWAYS_INLINE_LAMBDA {
      scaleBlock<Q::kDivide>(x + b, len, factors[k], scaled + b);
    });
    t = scaled;
  }
  Q::template encodeCodes<kStochastic>(t, n, random, elements);
  if constexpr (Q::kScaleBytes != 0) {
    forEachBlock<kBlock>(n, block, [&](size_t k, size_t b, size_t len) QCCL_ALWAYS_INLINE_LAMBDA {
      if (factors[k] != factors[k]) {
        std::memset(elements + b * Q::kElementBits / 8, 0, (len * Q::kElementBits + 7) / 8);
      }
    });
  }
}

// ---- drivers --------------------------------------------------------------------------------

// nvfp4's chunk scale needs the amax of everything that will be quantized: a first pass over
// the prepared tiles. Non-finite values are left out (their blocks are marked on their own).
template <class Q>
float chunkEncodeScale(const EncodeJob& job, const RhtRuns& runs, size_t tile) {
  float* x = job.scratch;
  float* p = job.scratch + tile;
  // |x| bits + 2^23 as signed integers: finite values stay positive, NaN and infinity wrap to
  // negative and drop out of a plain (vectorisable) signed max.
  int32_t shifted = 0x00800000;
  for (size_t start = 0; start < job.paddedCount; start += tile) {
    const size_t n = job.paddedCount - start < tile ? job.paddedCount - start : tile;
    const float* values = prepareTile(job, start, n, runs, x, p);
    for (size_t i = 0; i < n; ++i) {
      const int32_t v = int32_t((floatBits(values[i]) & kAbsMask) + 0x00800000u);
      shifted = v > shifted ? v : shifted;
    }
  }
  return Q::encodeScale(bitsFloat(uint32_t(shifted) - 0x00800000u));
}

template <class Q, bool kStochastic>
float encodeWith(const EncodeJob& job) {
  const size_t tile = codec::tileElements(job.spec);
  const size_t block = job.spec.block ? job.spec.block : tile;
  float* x = job.scratch;
  float* p = x + tile;
  float* decoded = p + tile;
  uint32_t* random = reinterpret_cast<uint32_t*>(decoded + tile);
  float* factors = decoded + 2 * tile;
  const RhtRuns runs = rhtRuns(job.spec.rhtSize, job.seed);
  ChunkContext chunk;
  if constexpr (Q::kNeedsChunkScale) {
    chunk.encodeScale = chunkEncodeScale<Q>(job, runs, tile);
    chunk.decodeScale = 1.0f / chunk.encodeScale;
  }
  for (size_t start = 0; start < job.paddedCount; start += tile) {
    const size_t n = job.paddedCount - start < tile ? job.paddedCount - start : tile;
    const float* values = prepareTile(job, start, n, runs, x, p);
    if (kStochastic) drawRandomBits(job, job.offset + start, n, random);
    withBlockSize<Q>(block, [&](auto kBlock) {
      encodeTileBlocks<Q, kStochastic, decltype(kBlock)::value>(job, values, random, start, n,
                                                                block, chunk, factors, decoded);
    });
    if (job.residual && start < job.count) {
      decodeBlocks<Q>(job.spec, job.scales, job.elements, start, n, chunk, factors, decoded);
      if (runs.size) rotateTile(decoded, n, runs, false);
      const size_t valid = n < job.count - start ? n : job.count - start;
      updateResidual(job, start, valid, job.spec.rhtSize ? p : x, decoded);
    }
  }
  return chunk.encodeScale;
}

template <class Q>
void decodeWith(const DecodeJob& job) {
  const size_t tile = codec::tileElements(job.spec);
  float* x = job.scratch;
  float* factors = x + tile;
  const RhtRuns runs = rhtRuns(job.spec.rhtSize, job.seed);
  ChunkContext chunk;
  chunk.encodeScale = job.chunkScale;
  chunk.decodeScale = 1.0f / job.chunkScale;
  for (size_t start = 0; start < job.count; start += tile) {
    const size_t n = job.paddedCount - start < tile ? job.paddedCount - start : tile;
    // Plain fp32 output is decoded in place; the rest goes through the tile buffer.
    const bool direct = job.outputType == qcclFloat32 && !job.accumulate && !job.spec.rhtSize;
    float* out = direct ? static_cast<float*>(job.output) + start : x;
    decodeBlocks<Q>(job.spec, job.scales, job.elements, start, n, chunk, factors, out);
    if (direct) continue;
    if (runs.size) rotateTile(x, n, runs, false);
    const size_t valid = n < job.count - start ? n : job.count - start;
    if (job.accumulate) {
      float* acc = static_cast<float*>(job.output) + start;
      for (size_t i = 0; i < valid; ++i) acc[i] += x[i];
    } else {
      storeFloats(x, valid, advance(job.output, start, job.outputType), job.outputType);
    }
  }
}

// ---- format dispatch ----------------------------------------------------------------------------

// Calls fn.template operator()<Q>() with the quantizer of the job's format and input dtype.
template <class Fn>
auto withQuantizer(Format format, qcclDataType_t noneType, Fn&& fn) {
  switch (format) {
    case Format::None:
      if (noneType == qcclFloat32) return fn.template operator()<quant::RawFloatQuantizer>();
      if (noneType == qcclBfloat16) return fn.template operator()<quant::CastQuantizer<Bf16>>();
      return fn.template operator()<quant::CastQuantizer<Fp16>>();
    case Format::Bf16: return fn.template operator()<quant::CastQuantizer<Bf16>>();
    case Format::Fp16: return fn.template operator()<quant::CastQuantizer<Fp16>>();
    case Format::Fp8E4M3: return fn.template operator()<quant::Fp8Quantizer<E4M3>>();
    case Format::Fp8E5M2: return fn.template operator()<quant::Fp8Quantizer<E5M2>>();
    case Format::MxFp8: return fn.template operator()<quant::MxQuantizer<E4M3>>();
    case Format::MxFp4: return fn.template operator()<quant::MxQuantizer<E2M1>>();
    case Format::NvFp4: return fn.template operator()<quant::NvFp4Quantizer>();
    case Format::Fp4Ue5m3: return fn.template operator()<quant::Fp4Ue5m3Quantizer>();
    case Format::Int8: return fn.template operator()<quant::IntQuantizer<8>>();
    case Format::Int4: return fn.template operator()<quant::IntQuantizer<4>>();
    case Format::Int2: return fn.template operator()<quant::Int2Quantizer>();
    case Format::TopK:  // selects before any kernel runs (codecs/topk_codec.h): never here
    case Format::Sign1: break;
  }
  return fn.template operator()<quant::Sign1Quantizer>();
}

struct EncodeRun {
  const EncodeJob& job;
  template <class Q>
  float operator()() const {
    return job.spec.stochastic ? encodeWith<Q, true>(job) : encodeWith<Q, false>(job);
  }
};

struct DecodeRun {
  const DecodeJob& job;
  template <class Q>
  void operator()() const {
    decodeWith<Q>(job);
  }
};

inline float encode(const EncodeJob& job) {
  return withQuantizer(job.spec.format, job.inputType, EncodeRun{job});
}

inline void decode(const DecodeJob& job) {
  withQuantizer(job.spec.format, job.sourceType, DecodeRun{job});
}

}  // namespace kernels
}  // namespace QCCL_ISA
}  // namespace qccl
