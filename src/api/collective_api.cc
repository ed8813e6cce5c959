// The collectives: each packs its arguments and calls one runner in src/comm.
#include "codecs/codec_spec.h"
#include "src/api/api_guard.h"
#include "src/comm/collective_calls.h"
#include "src/comm/masked_calls.h"

using qccl::apiCall;
using qccl::CollectiveKind;

extern "C" {

qcclResult_t qcclAllReduceEx(const void* sendbuff, void* recvbuff, size_t count,
                             qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                             cudaStream_t stream, const qcclCallConfig_t* config) {
  return apiCall(__func__, [&] {
    qccl::runReduction(qccl::usableComm(comm), {CollectiveKind::AllReduce, sendbuff, recvbuff,
                                                count, datatype, op, stream, config});
  });
}

qcclResult_t qcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                           cudaStream_t stream) {
  return qcclAllReduceEx(sendbuff, recvbuff, count, datatype, op, comm, stream, nullptr);
}

qcclResult_t qcclReduceScatterEx(const void* sendbuff, void* recvbuff, size_t recvcount,
                                 qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                                 cudaStream_t stream, const qcclCallConfig_t* config) {
  return apiCall(__func__, [&] {
    qccl::runReduction(qccl::usableComm(comm), {CollectiveKind::ReduceScatter, sendbuff, recvbuff,
                                                recvcount, datatype, op, stream, config});
  });
}

qcclResult_t qcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                               cudaStream_t stream) {
  return qcclReduceScatterEx(sendbuff, recvbuff, recvcount, datatype, op, comm, stream, nullptr);
}

qcclResult_t qcclAllGatherEx(const void* sendbuff, void* recvbuff, size_t sendcount,
                             qcclDataType_t datatype, qcclComm_t comm, cudaStream_t stream,
                             const qcclCallConfig_t* config) {
  return apiCall(__func__, [&] {
    qccl::runReduction(qccl::usableComm(comm), {CollectiveKind::AllGather, sendbuff, recvbuff,
                                                sendcount, datatype, qcclSum, stream, config});
  });
}

qcclResult_t qcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           qcclDataType_t datatype, qcclComm_t comm, cudaStream_t stream) {
  return qcclAllGatherEx(sendbuff, recvbuff, sendcount, datatype, comm, stream, nullptr);
}

qcclResult_t qcclMaskedReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                     qcclDataType_t datatype, qcclRedOp_t op, const uint8_t* mask,
                                     qcclComm_t comm, cudaStream_t stream,
                                     const qcclCallConfig_t* config) {
  return apiCall(__func__, [&] {
    qccl::runMasked(qccl::usableComm(comm),
                    {true, sendbuff, recvbuff, recvcount, datatype, op, mask, stream, config});
  });
}

qcclResult_t qcclMaskedAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                 qcclDataType_t datatype, const uint8_t* mask, qcclComm_t comm,
                                 cudaStream_t stream, const qcclCallConfig_t* config) {
  return apiCall(__func__, [&] {
    qccl::runMasked(qccl::usableComm(comm), {false, sendbuff, recvbuff, sendcount, datatype,
                                             qcclSum, mask, stream, config});
  });
}

qcclResult_t qcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           qcclDataType_t datatype, int root, qcclComm_t comm,
                           cudaStream_t stream) {
  return apiCall(__func__, [&] {
    qccl::runBroadcast(qccl::usableComm(comm), sendbuff, recvbuff, count, datatype, root, stream);
  });
}

qcclResult_t qcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          qcclDataType_t datatype, qcclComm_t comm, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    qccl::runAlltoall(qccl::usableComm(comm), sendbuff, recvbuff, count, datatype, stream);
  });
}

qcclResult_t qcclBarrier(qcclComm_t comm, cudaStream_t stream) {
  return apiCall(__func__, [&] { qccl::runBarrier(qccl::usableComm(comm), stream); });
}

qcclResult_t qcclCommPredict(qcclComm_t comm, const char* collective, size_t count,
                             qcclDataType_t datatype, const char* codec,
                             qcclPrediction_t* prediction) {
  return apiCall(__func__, [&] {
    if (collective == nullptr || prediction == nullptr) {
      qccl::throwError(qcclInvalidArgument, "%s is NULL",
                       collective == nullptr ? "collective" : "prediction");
    }
    const CollectiveKind kind = qccl::parseCollectiveKind(collective);
    qcclComm& c = qccl::usableComm(comm);
    // A spec that does not parse throws CodecError, which apiCall reports as it says.
    *prediction = qccl::predictCall(c, kind, count, datatype,
                                    codec ? qccl::codec::parseCodecSpec(codec) : c.settings.codec);
  });
}

}  // extern "C"
