// The real NCCL behind the interposer: QCCL_NCCL_LIB if set, else the next definition of NCCL's
// names in the process's link order (the libnccl the application linked), else libnccl.so.2.
// qccl's own NCCL exchange (src/nccl) is pointed at the same library, so that the compressed path
// and the passed-through calls share one NCCL.
#pragma once

#include <string>

#include "src/nccl/nccl_abi.h"

namespace qccl::interposer {

struct RealNccl {
  std::string path;
  nccl::Result (*allReduce)(const void*, void*, size_t, nccl::DataType, nccl::RedOp, nccl::Comm,
                            cudaStream_t);
  nccl::Result (*reduceScatter)(const void*, void*, size_t, nccl::DataType, nccl::RedOp, nccl::Comm,
                                cudaStream_t);
  nccl::Result (*allGather)(const void*, void*, size_t, nccl::DataType, nccl::Comm, cudaStream_t);
  nccl::Result (*groupStart)();
  nccl::Result (*groupEnd)();
  nccl::Result (*groupSimulateEnd)(void*);  // NCCL 2.22 on; NULL before
  nccl::Result (*commDestroy)(nccl::Comm);
  nccl::Result (*commAbort)(nccl::Comm);
  nccl::Result (*commCount)(nccl::Comm, int*);
  nccl::Result (*commUserRank)(nccl::Comm, int*);
  nccl::Result (*commGetAsyncError)(nccl::Comm, nccl::Result*);
};

// Found at the first call and kept. Throws Error(qcclInvalidUsage) when there is no real NCCL, or
// when what was found is this interposer itself.
const RealNccl& realNccl();

}  // namespace qccl::interposer
