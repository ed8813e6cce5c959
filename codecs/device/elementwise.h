// Element i of the device executor's conversions (to and from fp32, accumulate, divide), the
// arithmetic of the host executor's loops (collectives/reduction.cc): exact widening, rounding to
// nearest even when narrowing.
#pragma once

#include "codecs/device/encode_tile.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

enum class ElementOp { ToFloat32, AddToFloat32, Divide, FromFloat32 };

// out/acc/values: fp32 except for FromFloat32's out (of dtype); in: dtype except for FromFloat32.
struct ElementArgs {
  ElementOp op;
  const void* in;
  void* out;
  int dtype;
  float divisor;
  uint64_t count;
};

QCCL_HD void elementAt(const ElementArgs& a, uint64_t i) {
  switch (a.op) {
    case ElementOp::ToFloat32: static_cast<float*>(a.out)[i] = loadValue(a.in, a.dtype, i); break;
    case ElementOp::AddToFloat32:
      static_cast<float*>(a.out)[i] += loadValue(a.in, a.dtype, i);
      break;
    case ElementOp::Divide: static_cast<float*>(a.out)[i] /= a.divisor; break;
    case ElementOp::FromFloat32: {
      const float v = static_cast<const float*>(a.in)[i];
      if (a.dtype == qcclFloat32) {
        static_cast<float*>(a.out)[i] = v;
      } else {
        static_cast<uint16_t*>(a.out)[i] =
            uint16_t(a.dtype == qcclBfloat16 ? encodeRne<Bf16>(v) : encodeRne<Fp16>(v));
      }
      break;
    }
  }
}

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
