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

#include "cpu/kernels.h"
#include "cpu/quantizers.h"
#include "element/hadamard.h"
#include "element/philox.h"

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

// Fills x[0, n) with the tile's values to quantize: input (+ residual), zeros beyond the input,
// rotated when +rht. With error feedback, p receives the unrotated x + residual.
inline void prepareTile(const EncodeJob& job, size_t start, size_t n, const RhtSigns& signs,
                        float* x, float* p) {
  const size_t valid = start < job.count ? (n < job.count - start ? n : job.count - start) : 0;
  loadFloats(advance(job.input, start, job.inputType), job.inputType, valid, x);
  for (size_t i = valid; i < n; ++i) x[i] = 0.0f;
  if (job.residual) {
    loadFloats(advance(static_cast<const void*>(job.residual), start, job.residualType),
               job.residualType, valid, p);
    for (size_t i = 0; i < valid; ++i) x[i] += p[i];
    std::memcpy(p, x, 4 * valid);
  }
  if (job.spec.rhtSize) {
    for (size_t r = 0; r < n; r += job.spec.rhtSize) rhtForward(x + r, job.spec.rhtSize, signs);
  }
}

// Stochastic-rounding bits of stream elements [first, first + n).
inline void drawRandomBits(const EncodeJob& job, uint64_t first, size_t n, uint32_t* bits) {
  size_t i = 0;
  for (; i < n && (first + i) % 4 != 0; ++i) {  // head up to a whole Philox block
    bits[i] =
        stochasticRoundingBlock(job.seed, job.rank, job.call, (first + i) / 4).v[(first + i) % 4];
  }
  const uint64_t group0 = (first + i) / 4;
  const size_t groups = (n - i) / 4;
  for (size_t g = 0; g < groups; ++g) {
    const PhiloxBlock b = stochasticRoundingBlock(job.seed, job.rank, job.call, group0 + g);
    for (int w = 0; w < 4; ++w) bits[i + 4 * g + w] = b.v[w];
  }
  for (i += 4 * groups; i < n; ++i) {
    bits[i] =
        stochasticRoundingBlock(job.seed, job.rank, job.call, (first + i) / 4).v[(first + i) % 4];
  }
}

// Residual update from the decoded tile: e = p - D(Q(p)) wherever the decoded value is finite
// (a non-finite block decodes to NaN and leaves its residual untouched).
inline void updateResidual(const EncodeJob& job, size_t start, size_t valid, const float* p,
                           const float* decoded, float* e) {
  void* dst = advance(job.residual, start, job.residualType);
  loadFloats(dst, job.residualType, valid, e);
  for (size_t i = 0; i < valid; ++i) {
    const bool finite = (floatBits(decoded[i]) & kAbsMask) < kInfBits;
    e[i] = finite ? p[i] - decoded[i] : e[i];
  }
  storeFloats(e, valid, dst, job.residualType);
}

template <class Q>
void decodeBlocks(const codec::CodecSpec& spec, const uint8_t* scales, const uint8_t* elements,
                  size_t start, size_t n, const ChunkContext& chunk, float* out) {
  const size_t block = spec.block ? spec.block : n;
  for (size_t b = 0; b < n; b += block) {
    const size_t first = start + b;
    const size_t len = n - b < block ? n - b : block;
    Q::decode(scales + first / block * Q::kScaleBytes, elements + first * Q::kElementBits / 8, len,
              chunk, out + b);
  }
}

// ---- drivers --------------------------------------------------------------------------------

// nvfp4's chunk scale needs the amax of everything that will be quantized: a first pass over
// the prepared tiles. Non-finite values are left out (their blocks are marked on their own).
template <class Q>
float chunkEncodeScale(const EncodeJob& job, const RhtSigns& signs, size_t tile) {
  float* x = job.scratch;
  float* p = job.scratch + tile;
  uint32_t amax = 0;
  for (size_t start = 0; start < job.paddedCount; start += tile) {
    const size_t n = job.paddedCount - start < tile ? job.paddedCount - start : tile;
    prepareTile(job, start, n, signs, x, p);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t a = floatBits(x[i]) & kAbsMask;
      amax = maxU32(amax, a < kInfBits ? a : 0u);
    }
  }
  return Q::encodeScale(bitsFloat(amax));
}

template <class Q, bool kStochastic>
float encodeWith(const EncodeJob& job) {
  const size_t tile = codec::tileElements(job.spec);
  const size_t block = job.spec.block ? job.spec.block : tile;
  float* x = job.scratch;
  float* p = x + tile;
  float* decoded = p + tile;
  uint32_t* random = reinterpret_cast<uint32_t*>(decoded + tile);
  const RhtSigns signs = rhtSigns(job.seed);
  ChunkContext chunk;
  if constexpr (Q::kNeedsChunkScale) {
    chunk.encodeScale = chunkEncodeScale<Q>(job, signs, tile);
    chunk.decodeScale = 1.0f / chunk.encodeScale;
  }
  for (size_t start = 0; start < job.paddedCount; start += tile) {
    const size_t n = job.paddedCount - start < tile ? job.paddedCount - start : tile;
    prepareTile(job, start, n, signs, x, p);
    if (kStochastic) drawRandomBits(job, job.offset + start, n, random);
    for (size_t b = 0; b < n; b += block) {
      const size_t first = start + b;
      const size_t len = n - b < block ? n - b : block;
      Q::template encode<kStochastic>(x + b, len, random + b, chunk,
                                      job.scales + first / block * Q::kScaleBytes,
                                      job.elements + first * Q::kElementBits / 8);
    }
    if (job.residual && start < job.count) {
      decodeBlocks<Q>(job.spec, job.scales, job.elements, start, n, chunk, decoded);
      if (job.spec.rhtSize) {
        for (size_t r = 0; r < n; r += job.spec.rhtSize)
          rhtInverse(decoded + r, job.spec.rhtSize, signs);
      }
      const size_t valid = n < job.count - start ? n : job.count - start;
      updateResidual(job, start, valid, p, decoded, x);
    }
  }
  return chunk.encodeScale;
}

template <class Q>
void decodeWith(const DecodeJob& job) {
  const size_t tile = codec::tileElements(job.spec);
  float* x = job.scratch;
  const RhtSigns signs = rhtSigns(job.seed);
  ChunkContext chunk;
  chunk.encodeScale = job.chunkScale;
  chunk.decodeScale = 1.0f / job.chunkScale;
  for (size_t start = 0; start < job.count; start += tile) {
    const size_t n = job.paddedCount - start < tile ? job.paddedCount - start : tile;
    decodeBlocks<Q>(job.spec, job.scales, job.elements, start, n, chunk, x);
    if (job.spec.rhtSize) {
      for (size_t r = 0; r < n; r += job.spec.rhtSize) rhtInverse(x + r, job.spec.rhtSize, signs);
    }
    const size_t valid = n < job.count - start ? n : job.count - start;
    if (job.accumulate) {
      float* out = static_cast<float*>(job.output) + start;
      for (size_t i = 0; i < valid; ++i) out[i] += x[i];
    } else {
      storeFloats(x, valid, advance(job.output, start, job.outputType), job.outputType);
    }
  }
}

// ---- format dispatch ----------------------------------------------------------------------------

// Quantizers without a chunk scale get a trivial one.
template <class Base>
struct Unscaled : Base {
  static constexpr bool kNeedsChunkScale = false;
};
struct NvFp4 : quant::NvFp4Quantizer {
  static constexpr bool kNeedsChunkScale = true;
};

// Calls fn.template operator()<Q>() with the quantizer of the job's format and input dtype.
template <class Fn>
auto withQuantizer(Format format, qcclDataType_t noneType, Fn&& fn) {
  switch (format) {
    case Format::None:
      if (noneType == qcclFloat32)
        return fn.template operator()<Unscaled<quant::RawFloatQuantizer>>();
      if (noneType == qcclBfloat16)
        return fn.template operator()<Unscaled<quant::CastQuantizer<Bf16>>>();
      return fn.template operator()<Unscaled<quant::CastQuantizer<Fp16>>>();
    case Format::Bf16: return fn.template operator()<Unscaled<quant::CastQuantizer<Bf16>>>();
    case Format::Fp16: return fn.template operator()<Unscaled<quant::CastQuantizer<Fp16>>>();
    case Format::Fp8E4M3: return fn.template operator()<Unscaled<quant::Fp8Quantizer<E4M3>>>();
    case Format::Fp8E5M2: return fn.template operator()<Unscaled<quant::Fp8Quantizer<E5M2>>>();
    case Format::MxFp8: return fn.template operator()<Unscaled<quant::MxQuantizer<E4M3>>>();
    case Format::MxFp4: return fn.template operator()<Unscaled<quant::MxQuantizer<E2M1>>>();
    case Format::NvFp4: return fn.template operator()<NvFp4>();
    case Format::Fp4Ue5m3: return fn.template operator()<Unscaled<quant::Fp4Ue5m3Quantizer>>();
    case Format::Int8: return fn.template operator()<Unscaled<quant::IntQuantizer<8>>>();
    case Format::Int4: return fn.template operator()<Unscaled<quant::IntQuantizer<4>>>();
    case Format::Sign1: break;
  }
  return fn.template operator()<Unscaled<quant::Sign1Quantizer>>();
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
