// E8M0, the OCP MX block scale: a bare power of two 2^(code - 127); 0xFF is NaN.
#pragma once

#include "codecs/element/host_device.h"

namespace qccl {
inline namespace QCCL_ISA {

constexpr uint32_t kE8M0Nan = 0xFFu;

QCCL_HD float decodeE8M0(uint32_t code) {
  return code == kE8M0Nan ? bitsFloat(0x7fc00000u) : exp2Int(int(code) - 127);
}

// The MX scale rule (RCEIL, as NVIDIA hardware and Transformer Engine): the E8M0 code of
// 2^ceil(log2(amax / elemMax)), clamped to E8M0's range, so that no element of the block clips.
// Computed exactly from the bit patterns, not from a rounded quotient. amax is finite and >= 0;
// amax == 0 gives code 0.
QCCL_HD uint32_t mxScaleCode(float amax, float elemMax) {
  if (amax == 0.0f) return 0;
  int bias = 127;
  uint32_t a = floatBits(amax);
  if (a < 0x00800000u) {  // subnormal: scale by 2^64 (exact) to expose the exponent
    a = floatBits(amax * 18446744073709551616.0f);
    bias += 64;
  }
  const uint32_t m = floatBits(elemMax);
  // amax = ma * 2^ea, elemMax = mm * 2^em with ma, mm in [1, 2): the quotient lies in
  // (2^(ea-em-1), 2^(ea-em)] when ma <= mm, else in (2^(ea-em), 2^(ea-em+1)).
  int e = (int(a >> 23) - bias) - (int(m >> 23) - 127);
  e += (a & 0x7fffffu) > (m & 0x7fffffu) ? 1 : 0;
  e = e < -127 ? -127 : (e > 127 ? 127 : e);
  return uint32_t(e + 127);
}

}  // namespace QCCL_ISA
}  // namespace qccl
