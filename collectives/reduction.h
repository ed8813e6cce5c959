// Exact element-wise reduction of whole contributions, for the uncompressed paths: integers in
// their own type (wrapping like unsigned arithmetic), floating types in fp32 (fp64 for doubles)
// and rounded once at the end. Min and Max propagate NaN.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/memory.h"
#include "qccl/qccl.h"

namespace qccl::coll {

size_t dataTypeSize(qcclDataType_t dtype);  // 0 for an invalid dtype
bool isFloatType(qcclDataType_t dtype);
// Integers, fp32 and fp64: the Accumulator's partial results are values of the dtype itself.
bool accumulatesInOwnType(qcclDataType_t dtype);

class Accumulator {
 public:
  // storage: host memory the accumulator keeps its partial results in (a workspace buffer, so
  // that a call touches no fresh pages); resized here, in use until the accumulator goes.
  Accumulator(qcclDataType_t dtype, qcclRedOp_t op, size_t count, Buffer& storage);
  // Contributions come in rank order; the first one initialises.
  void add(const void* contribution);
  // Avg divides by contributors; writes count elements of dtype.
  void finish(int contributors, void* out) const;

 private:
  qcclDataType_t dtype_;
  qcclRedOp_t op_;
  size_t count_;
  bool empty_ = true;
  uint8_t* acc_;
};

// fp32 <-> the float dtypes (fp32, fp16, bf16) of the compressed paths.
void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out);
void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out);
// acc += fp32(in), element by element.
void addAsFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc);

}  // namespace qccl::coll
