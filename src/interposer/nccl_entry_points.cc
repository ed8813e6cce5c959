// The NCCL functions libqccl_nccl.so defines in front of the real NCCL (src/interposer/
// call_dispatch.h says what each does). Every other NCCL function is the real library's: the
// version script exports these names and nothing else.
#include "src/interposer/call_dispatch.h"

using qccl::CollectiveKind;
using qccl::nccl::Comm;
using qccl::nccl::DataType;
using qccl::nccl::RedOp;
using qccl::nccl::Result;

extern "C" {

Result ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, DataType datatype,
                     RedOp op, Comm comm, cudaStream_t stream) {
  return qccl::interposer::dispatch({CollectiveKind::AllReduce, sendbuff, recvbuff, count,
                                     qcclDataType_t(datatype), qcclRedOp_t(op), stream, nullptr},
                                    comm);
}

Result ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, DataType datatype,
                         RedOp op, Comm comm, cudaStream_t stream) {
  return qccl::interposer::dispatch({CollectiveKind::ReduceScatter, sendbuff, recvbuff, recvcount,
                                     qcclDataType_t(datatype), qcclRedOp_t(op), stream, nullptr},
                                    comm);
}

Result ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, DataType datatype,
                     Comm comm, cudaStream_t stream) {
  return qccl::interposer::dispatch({CollectiveKind::AllGather, sendbuff, recvbuff, sendcount,
                                     qcclDataType_t(datatype), qcclSum, stream, nullptr},
                                    comm);
}

Result ncclGroupStart() { return qccl::interposer::groupStart(); }
Result ncclGroupEnd() { return qccl::interposer::groupEnd(); }
Result ncclGroupSimulateEnd(void* simInfo) { return qccl::interposer::groupSimulateEnd(simInfo); }
Result ncclCommDestroy(Comm comm) { return qccl::interposer::destroy(comm); }
Result ncclCommAbort(Comm comm) { return qccl::interposer::abort(comm); }

}  // extern "C"
