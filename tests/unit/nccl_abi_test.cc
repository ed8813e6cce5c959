// qccl declares the part of NCCL's ABI it calls itself (src/nccl/nccl_abi.h), so that it builds
// without NCCL: those declarations against NCCL's own header.
#include <gtest/gtest.h>
#include <nccl.h>

#include "src/nccl/nccl_abi.h"

namespace qccl::nccl {
namespace {

static_assert(sizeof(UniqueId) == sizeof(ncclUniqueId), "ncclUniqueId is passed by value");
static_assert(sizeof(Result) == sizeof(ncclResult_t) &&
                  sizeof(DataType) == sizeof(ncclDataType_t) &&
                  sizeof(RedOp) == sizeof(ncclRedOp_t) && sizeof(Comm) == sizeof(ncclComm_t),
              "the enums travel as ints, the communicator as a pointer");
static_assert(kSuccess == ncclSuccess && kInProgress == ncclInProgress && kUint8 == ncclUint8, "");

TEST(NcclAbi, ResultsDatatypesAndOpsHaveQcclsValues) {
  EXPECT_EQ(int(ncclUnhandledCudaError), int(qcclUnhandledCudaError));
  EXPECT_EQ(int(ncclSystemError), int(qcclSystemError));
  EXPECT_EQ(int(ncclInternalError), int(qcclInternalError));
  EXPECT_EQ(int(ncclInvalidArgument), int(qcclInvalidArgument));
  EXPECT_EQ(int(ncclInvalidUsage), int(qcclInvalidUsage));
  EXPECT_EQ(int(ncclRemoteError), int(qcclRemoteError));
  EXPECT_EQ(int(ncclInProgress), int(qcclInProgress));
  EXPECT_EQ(int(ncclInt8), int(qcclInt8));
  EXPECT_EQ(int(ncclUint8), int(qcclUint8));
  EXPECT_EQ(int(ncclInt32), int(qcclInt32));
  EXPECT_EQ(int(ncclUint32), int(qcclUint32));
  EXPECT_EQ(int(ncclInt64), int(qcclInt64));
  EXPECT_EQ(int(ncclUint64), int(qcclUint64));
  EXPECT_EQ(int(ncclFloat16), int(qcclFloat16));
  EXPECT_EQ(int(ncclFloat32), int(qcclFloat32));
  EXPECT_EQ(int(ncclFloat64), int(qcclFloat64));
  EXPECT_EQ(int(ncclBfloat16), int(qcclBfloat16));
  EXPECT_EQ(int(ncclFloat8e4m3), int(qcclFloat8e4m3));
  EXPECT_EQ(int(ncclFloat8e5m2), int(qcclFloat8e5m2));
  EXPECT_EQ(int(ncclSum), int(qcclSum));
  EXPECT_EQ(int(ncclProd), int(qcclProd));
  EXPECT_EQ(int(ncclMax), int(qcclMax));
  EXPECT_EQ(int(ncclMin), int(qcclMin));
  EXPECT_EQ(int(ncclAvg), int(qcclAvg));
}

}  // namespace
}  // namespace qccl::nccl
