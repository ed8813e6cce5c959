// Short names of datatypes and reduction ops, as log lines and test names show them ("fp32",
// "bf16", "sum", ...).
// Header-only: test programs that link only the public library use it too.
#pragma once

#include "qccl/qccl.h"

namespace qccl::coll {

inline const char* dataTypeName(qcclDataType_t t) {
  switch (t) {
    case qcclInt8: return "int8";
    case qcclUint8: return "uint8";
    case qcclInt32: return "int32";
    case qcclUint32: return "uint32";
    case qcclInt64: return "int64";
    case qcclUint64: return "uint64";
    case qcclFloat16: return "fp16";
    case qcclFloat32: return "fp32";
    case qcclFloat64: return "fp64";
    case qcclBfloat16: return "bf16";
    case qcclFloat8e4m3: return "fp8e4m3";
    case qcclFloat8e5m2: return "fp8e5m2";
    default: return "dtype?";
  }
}

inline const char* redOpName(qcclRedOp_t op) {
  switch (op) {
    case qcclSum: return "sum";
    case qcclProd: return "prod";
    case qcclMax: return "max";
    case qcclMin: return "min";
    case qcclAvg: return "avg";
    case qcclBitwiseAnd: return "band";
    case qcclBitwiseOr: return "bor";
    case qcclBitwiseXor: return "bxor";
    default: return "op?";
  }
}

}  // namespace qccl::coll
