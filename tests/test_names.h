// Readable, stable names for parameterised test cases: the case's codec, dtype, op, rank count
// and so on in words, never gtest's dump of the parameter's bytes.
#pragma once

#include <string>

#include "qccl/qccl.h"

namespace qccl::test {

inline const char* dtypeName(qcclDataType_t t) {
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

inline const char* opName(qcclRedOp_t op) {
  switch (op) {
    case qcclSum: return "sum";
    case qcclProd: return "prod";
    case qcclMax: return "max";
    case qcclMin: return "min";
    case qcclAvg: return "avg";
    default: return "op?";
  }
}

// A codec spec as a test-name fragment: "nvfp4+rht/b32" -> "nvfp4_rht_b32".
inline std::string specTestName(std::string spec) {
  for (char& c : spec) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return spec;
}

}  // namespace qccl::test
