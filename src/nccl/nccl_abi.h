// The part of NCCL's C ABI that qccl calls, declared here rather than taken from nccl.h, so that
// libqccl builds without NCCL and loads whichever libnccl the process has at run time.
// tests/unit/nccl_abi_test.cc checks these declarations against nccl.h where it is installed.
#pragma once

#include <cstddef>

#include "qccl/qccl.h"

namespace qccl::nccl {

using Result = int;    // ncclResult_t: the values of qcclResult_t 0..7
using Comm = void*;    // ncclComm_t
using DataType = int;  // ncclDataType_t: the values of qcclDataType_t
using RedOp = int;     // ncclRedOp_t: Sum, Prod, Max, Min, Avg as qcclRedOp_t

constexpr Result kSuccess = 0;
constexpr Result kInProgress = 7;
constexpr DataType kUint8 = 1;

struct UniqueId {
  char internal[128];
};

}  // namespace qccl::nccl
