// Block quantizers: how one block of fp32 values becomes a scale and packed elements, and back.
// One struct per format, each with
//   encode<kStochastic>(x, n, random, context, scale, elements)
//   decode(scale, elements, n, context, out)
// Loops are written so the host compiler vectorises them with the target's instruction set; the
// arithmetic is the definition of the format (docs/CODECS.md), shared with the CUDA kernels.
//
// Included once per CPU target inside that target's inline namespace: no std templates here.
#pragma once

#include "element/e8m0.h"
#include "element/minifloat.h"
#include "element/stochastic_round.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace quant {

constexpr float kFloatMax = 3.40282347e38f;

// What a block needs from its chunk: nvfp4's two-level scale.
struct ChunkContext {
  float encodeScale = 1.0f;  // nvfp4 s_enc
  float decodeScale = 1.0f;  // nvfp4 1 / s_enc
};

// Largest |x| of the block as fp32 bits; >= kInfBits means a NaN or infinity is present.
inline uint32_t absMaxBits(const float* x, size_t n) {
  uint32_t m = 0;
  for (size_t i = 0; i < n; ++i) m = maxU32(m, floatBits(x[i]) & kAbsMask);
  return m;
}

inline bool isNonFinite(uint32_t absMax) { return absMax >= kInfBits; }

inline void storeScaleF32(uint8_t* scale, float value) {
  const uint32_t u = floatBits(value);
  for (int i = 0; i < 4; ++i) scale[i] = uint8_t(u >> (8 * i));
}

inline float loadScaleF32(const uint8_t* scale) {
  return bitsFloat(uint32_t(scale[0]) | uint32_t(scale[1]) << 8 | uint32_t(scale[2]) << 16 |
                   uint32_t(scale[3]) << 24);
}

constexpr float kNan = __builtin_nanf("");

// Packs codes of element pairs: element 2i in the low nibble of byte i.
template <class CodeOf>
inline void packNibbles(size_t n, uint8_t* out, CodeOf codeOf) {
  const size_t pairs = n / 2;
  for (size_t i = 0; i < pairs; ++i) {
    out[i] = uint8_t((codeOf(2 * i) & 0xF) | (codeOf(2 * i + 1) & 0xF) << 4);
  }
  if (n % 2) out[pairs] = uint8_t(codeOf(n - 1) & 0xF);
}

inline uint32_t nibble(const uint8_t* in, size_t i) { return (in[i / 2] >> (4 * (i % 2))) & 0xF; }

// Element-wise minifloat (bf16, fp16): no scale.
template <class F>
struct CastQuantizer {
  static constexpr unsigned kScaleBytes = 0;
  static constexpr unsigned kElementBits = 16;

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t* random, const ChunkContext&,
                     uint8_t*, uint8_t* elements) {
    for (size_t i = 0; i < n; ++i) {
      const float v = kStochastic ? stochasticRoundTo<F>(x[i], random[i]) : x[i];
      const uint32_t code = encodeRne<F>(v);
      elements[2 * i] = uint8_t(code);
      elements[2 * i + 1] = uint8_t(code >> 8);
    }
  }

  static void decode(const uint8_t*, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    for (size_t i = 0; i < n; ++i) {
      out[i] = qccl::decode<F>(uint32_t(elements[2 * i]) | uint32_t(elements[2 * i + 1]) << 8);
    }
  }
};

// Format none with fp32 input: the bytes themselves.
struct RawFloatQuantizer {
  static constexpr unsigned kScaleBytes = 0;
  static constexpr unsigned kElementBits = 32;

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t*, const ChunkContext&, uint8_t*,
                     uint8_t* elements) {
    std::memcpy(elements, x, 4 * n);
  }

  static void decode(const uint8_t*, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    std::memcpy(out, elements, 4 * n);
  }
};

// fp8e4m3 / fp8e5m2: fp32 scale = amax / elem_max per block; element = F(x / scale).
template <class F>
struct Fp8Quantizer {
  static constexpr unsigned kScaleBytes = 4;
  static constexpr unsigned kElementBits = 8;

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t* random, const ChunkContext&,
                     uint8_t* scale, uint8_t* elements) {
    const uint32_t amax = absMaxBits(x, n);
    if (isNonFinite(amax)) {
      storeScaleF32(scale, kNan);
      std::memset(elements, 0, n);
      return;
    }
    const float s = bitsFloat(amax) / maxValue<F>();
    const float divisor = s == 0.0f ? 1.0f : s;  // amax == 0 (or underflow): all zeros
    for (size_t i = 0; i < n; ++i) {
      float t = x[i] / divisor;
      if (kStochastic) t = stochasticRoundTo<F>(t, random[i]);
      elements[i] = uint8_t(encodeRne<F>(t));
    }
    storeScaleF32(scale, s);
  }

  static void decode(const uint8_t* scale, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    const float s = loadScaleF32(scale);
    for (size_t i = 0; i < n; ++i) out[i] = qccl::decode<F>(elements[i]) * s;
  }
};

// Element encoders for 8- and 4-bit packings, shared by the block-scaled minifloat formats.
template <class F>
struct ElementPacking;

template <>
struct ElementPacking<E4M3> {
  static constexpr unsigned kBits = 8;
  template <bool kStochastic>
  static void encode(const float* x, size_t n, float factor, const uint32_t* random, uint8_t* out) {
    for (size_t i = 0; i < n; ++i) {
      float t = x[i] * factor;
      if (kStochastic) t = stochasticRoundTo<E4M3>(t, random[i]);
      out[i] = uint8_t(encodeRne<E4M3>(t));
    }
  }
  static void decode(const uint8_t* in, size_t n, float factor, float* out) {
    for (size_t i = 0; i < n; ++i) out[i] = qccl::decode<E4M3>(in[i]) * factor;
  }
};

template <>
struct ElementPacking<E2M1> {
  static constexpr unsigned kBits = 4;
  template <bool kStochastic>
  static void encode(const float* x, size_t n, float factor, const uint32_t* random, uint8_t* out) {
    packNibbles(n, out, [&](size_t i) {
      float t = x[i] * factor;
      if (kStochastic) t = stochasticRoundTo<E2M1>(t, random[i]);
      return encodeRne<E2M1>(t);
    });
  }
  static void decode(const uint8_t* in, size_t n, float factor, float* out) {
    for (size_t i = 0; i < n; ++i) out[i] = qccl::decode<E2M1>(nibble(in, i)) * factor;
  }
};

// OCP MX (mxfp8, mxfp4): E8M0 scale 2^ceil(log2(amax / elem_max)); element = F(x / 2^e).
template <class F>
struct MxQuantizer {
  static constexpr unsigned kScaleBytes = 1;
  static constexpr unsigned kElementBits = ElementPacking<F>::kBits;

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t* random, const ChunkContext&,
                     uint8_t* scale, uint8_t* elements) {
    const uint32_t amax = absMaxBits(x, n);
    if (isNonFinite(amax)) {
      *scale = uint8_t(kE8M0Nan);
      std::memset(elements, 0, (n * kElementBits + 7) / 8);
      return;
    }
    const uint32_t code = mxScaleCode(bitsFloat(amax), maxValue<F>());
    *scale = uint8_t(code);
    // Multiplying by 2^-e is exact, so this is the division by the scale.
    ElementPacking<F>::template encode<kStochastic>(x, n, exp2Int(127 - int(code)), random,
                                                    elements);
  }

  static void decode(const uint8_t* scale, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    ElementPacking<F>::decode(elements, n, decodeE8M0(*scale), out);
  }
};

// NVFP4, Transformer Engine's recipe: chunk scale s_enc = 448 * 6 / chunk_amax; block scale
// E4M3(block_amax * (s_enc / 6)); element E2M1(x * 1 / (scale * (1 / s_enc))).
struct NvFp4Quantizer {
  static constexpr unsigned kScaleBytes = 1;
  static constexpr unsigned kElementBits = 4;

  static float encodeScale(float chunkAmax) {
    const float s = (448.0f * 6.0f) / chunkAmax;
    const float clamped = s > kFloatMax ? kFloatMax : s;
    return (chunkAmax == 0.0f || clamped == 0.0f) ? 1.0f : clamped;
  }

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t* random, const ChunkContext& chunk,
                     uint8_t* scale, uint8_t* elements) {
    const uint32_t amax = absMaxBits(x, n);
    if (isNonFinite(amax)) {
      *scale = uint8_t(E4M3::kNanCode);
      std::memset(elements, 0, (n + 1) / 2);
      return;
    }
    constexpr float kInvElemMax = 1.0f / 6.0f;
    const uint32_t code = encodeRne<E4M3>(bitsFloat(amax) * (chunk.encodeScale * kInvElemMax));
    *scale = uint8_t(code);
    const float reciprocal = 1.0f / (qccl::decode<E4M3>(code) * chunk.decodeScale);
    ElementPacking<E2M1>::template encode<kStochastic>(
        x, n, reciprocal > kFloatMax ? kFloatMax : reciprocal, random, elements);
  }

  static void decode(const uint8_t* scale, const uint8_t* elements, size_t n,
                     const ChunkContext& chunk, float* out) {
    ElementPacking<E2M1>::decode(elements, n, qccl::decode<E4M3>(*scale) * chunk.decodeScale, out);
  }
};

// fp4ue5m3: block scale = the smallest UE5M3 value >= block_amax / 6, so nothing clips and no
// chunk scale is needed; element = E2M1(x / scale).
struct Fp4Ue5m3Quantizer {
  static constexpr unsigned kScaleBytes = 1;
  static constexpr unsigned kElementBits = 4;

  static uint32_t scaleCode(float amax) {
    uint32_t code = encodeRne<UE5M3>(amax / 6.0f);
    // 6 * value is exact in fp32 (at most 6 significant bits), so this test is exact.
    if (6.0f * qccl::decode<UE5M3>(code) < amax && code < UE5M3::kMaxCode) ++code;
    return code;
  }

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t* random, const ChunkContext&,
                     uint8_t* scale, uint8_t* elements) {
    const uint32_t amax = absMaxBits(x, n);
    if (isNonFinite(amax)) {
      *scale = uint8_t(UE5M3::kNanCode);
      std::memset(elements, 0, (n + 1) / 2);
      return;
    }
    const uint32_t code = scaleCode(bitsFloat(amax));
    *scale = uint8_t(code);
    const float s = qccl::decode<UE5M3>(code);
    const float divisor = s == 0.0f ? 1.0f : s;
    packNibbles(n, elements, [&](size_t i) {
      float t = x[i] / divisor;
      if (kStochastic) t = stochasticRoundTo<E2M1>(t, random[i]);
      return encodeRne<E2M1>(t);
    });
  }

  static void decode(const uint8_t* scale, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    ElementPacking<E2M1>::decode(elements, n, qccl::decode<UE5M3>(*scale), out);
  }
};

// Symmetric integers (ZeRO++ style): fp32 scale = amax / qmax; q = clamp(rne(x / scale)).
template <int kBits>
struct IntQuantizer {
  static constexpr unsigned kScaleBytes = 4;
  static constexpr unsigned kElementBits = kBits;
  static constexpr int kMax = (1 << (kBits - 1)) - 1;

  // Round to the nearest integer, ties to even: adding 1.5 * 2^23 leaves the integer part in
  // the low mantissa bits (|t| <= 2^22).
  static int32_t quantize(float t) {
    const int32_t q = int32_t(floatBits(t + 12582912.0f) - 0x4B400000u);
    return q > kMax ? kMax : (q < -kMax ? -kMax : q);
  }

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t* random, const ChunkContext&,
                     uint8_t* scale, uint8_t* elements) {
    const uint32_t amax = absMaxBits(x, n);
    if (isNonFinite(amax)) {
      storeScaleF32(scale, kNan);
      std::memset(elements, 0, (n * kBits + 7) / 8);
      return;
    }
    const float s = bitsFloat(amax) / float(kMax);
    const float divisor = s == 0.0f ? 1.0f : s;
    auto codeOf = [&](size_t i) {
      float t = x[i] / divisor;
      if (kStochastic) t = stochasticRound(t, 0, random[i]);
      return uint32_t(quantize(t));
    };
    if constexpr (kBits == 8) {
      for (size_t i = 0; i < n; ++i) elements[i] = uint8_t(codeOf(i));
    } else {
      packNibbles(n, elements, codeOf);
    }
    storeScaleF32(scale, s);
  }

  static void decode(const uint8_t* scale, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    const float s = loadScaleF32(scale);
    for (size_t i = 0; i < n; ++i) {
      const int32_t q =
          kBits == 8 ? int32_t(int8_t(elements[i])) : int32_t(nibble(elements, i) << 28) >> 28;
      out[i] = float(q) * s;
    }
  }
};

// sign1: one sign bit per element (bit i % 8 of byte i / 8), fp32 scale = mean |x| of the block.
// The mean's summation order is part of the definition: eight lanes, lane l summing elements
// l, l + 8, ... in order, then ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), over n.
struct Sign1Quantizer {
  static constexpr unsigned kScaleBytes = 4;
  static constexpr unsigned kElementBits = 1;

  static float meanAbs(const float* x, size_t n) {
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const size_t full = n / 8 * 8;
    for (size_t i = 0; i < full; i += 8) {
      for (int l = 0; l < 8; ++l) lane[l] += bitsFloat(floatBits(x[i + l]) & kAbsMask);
    }
    for (size_t i = full; i < n; ++i) lane[i - full] += bitsFloat(floatBits(x[i]) & kAbsMask);
    const float sum =
        ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    return sum / float(n);
  }

  template <bool kStochastic>
  static void encode(const float* x, size_t n, const uint32_t*, const ChunkContext&, uint8_t* scale,
                     uint8_t* elements) {
    const bool nonFinite = isNonFinite(absMaxBits(x, n));
    storeScaleF32(scale, nonFinite ? kNan : meanAbs(x, n));
    const size_t bytes = (n + 7) / 8;
    for (size_t b = 0; b < bytes; ++b) {
      uint32_t byte = 0;
      for (size_t k = 0; k < 8 && 8 * b + k < n; ++k) {
        byte |= (floatBits(x[8 * b + k]) >> 31) << k;
      }
      elements[b] = nonFinite ? 0 : uint8_t(byte);
    }
  }

  static void decode(const uint8_t* scale, const uint8_t* elements, size_t n, const ChunkContext&,
                     float* out) {
    const uint32_t s = floatBits(loadScaleF32(scale));
    for (size_t i = 0; i < n; ++i)
      out[i] = bitsFloat(s ^ (uint32_t(elements[i / 8] >> (i % 8)) & 1u) << 31);
  }
};

}  // namespace quant
}  // namespace QCCL_ISA
}  // namespace qccl
