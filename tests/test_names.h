// Readable, stable names for parameterised test cases: the case's codec, dtype, op, rank count
// and so on in words, never gtest's dump of the parameter's bytes.
#pragma once

#include <string>

#include "collectives/type_names.h"
#include "qccl/qccl.h"

namespace qccl::test {

inline const char* dtypeName(qcclDataType_t t) { return coll::dataTypeName(t); }

inline const char* opName(qcclRedOp_t op) { return coll::redOpName(op); }

// A codec spec as a test-name fragment: "nvfp4+rht/b32" -> "nvfp4_rht_b32".
inline std::string specTestName(std::string spec) {
  for (char& c : spec) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return spec;
}

}  // namespace qccl::test
