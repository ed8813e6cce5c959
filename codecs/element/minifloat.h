// Small floating-point element formats and their conversions from and to fp32, written once for
// the host (every CPU target) and the device. Conversions are branch-free selects so that the
// host compiler vectorises the loops that call them.
//
// Rules (docs/CODECS.md): float -> format rounds to nearest, ties to even, and saturates finite
// overflow to +-max. Infinity saturates too, except in formats that keep it (fp16, bf16).
// NaN becomes the format's canonical NaN: all magnitude bits set, sign clear (for E2M1, which
// has no NaN, that is +6, as NVIDIA's __nv_cvt_float_to_fp4 does). These match NVIDIA's
// __NV_SATFINITE conversions bit for bit (tests/unit/oracle_nvidia_test.cc).
#pragma once

#include "codecs/element/host_device.h"

namespace qccl {
inline namespace QCCL_ISA {

enum class Specials {
  Ieee,     // exponent all ones: infinity (mantissa 0) or NaN
  NanOnly,  // only the all-ones magnitude is NaN ("fn" formats); no infinity
  None      // every code is finite
};

template <int ExpBits, int ManBits, int Bias, bool Signed, Specials Kind, bool KeepsInf>
struct MinifloatFormat {
  static constexpr int kExpBits = ExpBits;
  static constexpr int kManBits = ManBits;
  static constexpr int kBias = Bias;
  static constexpr bool kSigned = Signed;
  static constexpr Specials kSpecials = Kind;
  static constexpr bool kKeepsInf = KeepsInf;

  static constexpr uint32_t kMagBits = ExpBits + ManBits;
  static constexpr uint32_t kMagMask = (1u << kMagBits) - 1;
  static constexpr uint32_t kManMask = (1u << ManBits) - 1;
  static constexpr uint32_t kExpAllOnes = (1u << ExpBits) - 1;
  static constexpr uint32_t kMaxCode =
      Kind == Specials::Ieee      ? ((kExpAllOnes - 1) << ManBits) | kManMask
      : Kind == Specials::NanOnly ? (kExpAllOnes << ManBits) | (kManMask - 1)
                                  : kMagMask;
  static constexpr uint32_t kInfCode = kExpAllOnes << ManBits;
  static constexpr uint32_t kNanCode = kMagMask;
  static constexpr int kMinExp = 1 - Bias;  // exponent of the smallest normal
};

using E4M3 = MinifloatFormat<4, 3, 7, true, Specials::NanOnly, false>;     // OCP E4M3fn, max 448
using E5M2 = MinifloatFormat<5, 2, 15, true, Specials::Ieee, false>;       // OCP E5M2, max 57344
using E2M1 = MinifloatFormat<2, 1, 1, true, Specials::None, false>;        // OCP MX FP4, max 6
using UE5M3 = MinifloatFormat<5, 3, 15, false, Specials::NanOnly, false>;  // max 114688
using Fp16 = MinifloatFormat<5, 10, 15, true, Specials::Ieee, true>;       // IEEE binary16
using Bf16 = MinifloatFormat<8, 7, 127, true, Specials::Ieee, true>;       // bfloat16

template <class F>
QCCL_HD float maxValue() {
  constexpr uint32_t e = F::kMaxCode >> F::kManBits;
  constexpr uint32_t m = F::kMaxCode & F::kManMask;
  return bitsFloat(((e + 127 - F::kBias) << 23) | (m << (23 - F::kManBits)));
}

// fp32 -> code, round to nearest even, saturating (see the rules above).
template <class F>
QCCL_HD uint32_t encodeRne(float f) {
  constexpr int kShift = 23 - F::kManBits;
  const uint32_t u = floatBits(f);
  const uint32_t a = u & kAbsMask;
  // Normal range: round the fp32 bit pattern at the target's last mantissa bit; the carry may
  // ripple into the exponent, which is exactly the rounding to the next binade.
  const uint32_t rounded = (a + ((1u << (kShift - 1)) - 1) + ((a >> kShift) & 1)) >> kShift;
  uint32_t code;
  if constexpr (F::kBias == 127) {
    code = rounded;  // same exponent range as fp32: the bit rounding covers subnormals too
  } else {
    constexpr uint32_t kRebias = uint32_t(127 - F::kBias) << F::kManBits;
    constexpr uint32_t kMinNormalBits = uint32_t(F::kMinExp + 127) << 23;
    // Below the normal range, count in units of the smallest subnormal; adding 2^23 makes the
    // FPU round that count to an integer (ties to even). The scaling is exact.
    const float units = bitsFloat(a) * exp2Int(F::kManBits - F::kMinExp);
    const uint32_t subnormal = floatBits(units + 8388608.0f) - 0x4B000000u;
    code = a < kMinNormalBits ? subnormal : rounded - kRebias;
  }
  code = minU32(code, F::kMaxCode);
  if constexpr (F::kKeepsInf) code = a == kInfBits ? F::kInfCode : code;
  if constexpr (F::kSigned) {
    code |= (u >> 31) << F::kMagBits;
  } else {
    code = (u >> 31) ? 0u : code;  // unsigned formats clamp negative values to zero
  }
  return a > kInfBits ? F::kNanCode : code;
}

// code -> fp32, exact: significand (with the implicit bit for normals) times the power of two
// of its last bit. Both factors are normal fp32 numbers for every format here, so the multiply
// is exact and never meets a subnormal operand (which costs a microcode assist on x86).
template <class F>
QCCL_HD float decode(uint32_t code) {
  const uint32_t mag = code & F::kMagMask;
  const uint32_t sign = F::kSigned ? ((code >> F::kMagBits) & 1u) << 31 : 0u;
  const uint32_t exp = mag >> F::kManBits;
  uint32_t bits;
  if constexpr (F::kBias == 127) {
    bits = mag << (23 - F::kManBits);  // bf16: fp32's own exponent range, subnormals included
  } else {
    static_assert(F::kMinExp - F::kManBits >= -126, "lowest bit must be a normal fp32");
    const uint32_t significand = (mag & F::kManMask) | (exp != 0 ? 1u << F::kManBits : 0u);
    const int32_t lsbExp = int32_t(exp != 0 ? exp : 1) - F::kBias - F::kManBits;
    bits = floatBits(float(significand) * bitsFloat(uint32_t(lsbExp + 127) << 23));
  }
  if constexpr (F::kSpecials == Specials::Ieee) {
    bits = exp == F::kExpAllOnes ? (kInfBits | (mag & F::kManMask)) : bits;
  }
  if constexpr (F::kSpecials == Specials::NanOnly) bits = mag == F::kMagMask ? 0x7fc00000u : bits;
  return bitsFloat(bits | sign);
}

}  // namespace QCCL_ISA
}  // namespace qccl
