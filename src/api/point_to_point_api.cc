// Point-to-point messages and group calls (src/comm/p2p_calls.h), and the rooted collectives
// qcclReduce, qcclGather, qcclScatter: each packs its arguments and calls one runner in src/comm.
#include <memory>

#include "src/api/api_guard.h"
#include "src/comm/collective_calls.h"
#include "src/comm/p2p_calls.h"

// A non-blocking message: its communicator and its id there.
struct qcclRequest {
  qcclComm_t comm;
  uint64_t id;
};

using qccl::apiCall;

namespace qccl {
namespace {

P2pMessage message(bool send, const void* buffer, size_t count, qcclDataType_t datatype, int peer,
                   unsigned int tag) {
  P2pMessage m;
  m.send = send;
  m.buffer = const_cast<void*>(buffer);
  m.count = count;
  m.dtype = datatype;
  m.peer = peer;
  m.tag = tag;
  return m;
}

void hostOnly(cudaStream_t stream, const char* function) {
  if (stream != nullptr) {
    throwError(qcclInvalidUsage, "%s takes host buffers and a NULL stream", function);
  }
}

qcclResult_t post(const char* function, qcclComm_t comm, const P2pMessage& m,
                  qcclRequest_t* request) {
  return apiCall(function, [&] {
    if (request == nullptr) throwError(qcclInvalidArgument, "request is NULL");
    *request = nullptr;
    auto r = std::make_unique<qcclRequest>(qcclRequest{comm, postMessage(usableComm(comm), m)});
    *request = r.release();
  });
}

}  // namespace
}  // namespace qccl

extern "C" {

qcclResult_t qcclSend(const void* sendbuff, size_t count, qcclDataType_t datatype, int peer,
                      qcclComm_t comm, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    qccl::hostOnly(stream, __func__);
    qccl::sendOrReceive(qccl::usableComm(comm),
                        qccl::message(true, sendbuff, count, datatype, peer, 0));
  });
}

qcclResult_t qcclRecv(void* recvbuff, size_t count, qcclDataType_t datatype, int peer,
                      qcclComm_t comm, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    qccl::hostOnly(stream, __func__);
    qccl::sendOrReceive(qccl::usableComm(comm),
                        qccl::message(false, recvbuff, count, datatype, peer, 0));
  });
}

qcclResult_t qcclGroupStart(void) {
  return apiCall(__func__, [] { qccl::groupStart(); });
}

qcclResult_t qcclGroupEnd(void) {
  return apiCall(__func__, [] { qccl::groupEnd(); });
}

qcclResult_t qcclIsend(const void* sendbuff, size_t count, qcclDataType_t datatype, int peer,
                       unsigned int tag, qcclComm_t comm, qcclRequest_t* request) {
  return qccl::post(__func__, comm, qccl::message(true, sendbuff, count, datatype, peer, tag),
                    request);
}

qcclResult_t qcclIrecv(void* recvbuff, size_t count, qcclDataType_t datatype, int peer,
                       unsigned int tag, qcclComm_t comm, qcclRequest_t* request) {
  return qccl::post(__func__, comm, qccl::message(false, recvbuff, count, datatype, peer, tag),
                    request);
}

qcclResult_t qcclIrecvAnySource(void* recvbuff, size_t count, qcclDataType_t datatype,
                                unsigned int tag, qcclComm_t comm, int* source,
                                qcclRequest_t* request) {
  qccl::P2pMessage m = qccl::message(false, recvbuff, count, datatype, 0, tag);
  m.anySource = true;
  m.source = source;
  return qccl::post(__func__, comm, m, request);
}

qcclResult_t qcclTest(qcclRequest_t request, int* done) {
  return apiCall(__func__, [&] {
    if (request == nullptr || done == nullptr) {
      qccl::throwError(qcclInvalidArgument, "%s is NULL", request == nullptr ? "request" : "done");
    }
    std::unique_ptr<qcclRequest> owned(request);  // freed when done or failed
    *done = qccl::testMessage(qccl::usableComm(request->comm), request->id) ? 1 : 0;
    if (!*done) owned.release();
  });
}

qcclResult_t qcclWait(qcclRequest_t request) {
  return apiCall(__func__, [&] {
    if (request == nullptr) qccl::throwError(qcclInvalidArgument, "request is NULL");
    std::unique_ptr<qcclRequest> owned(request);
    qccl::waitMessages({{&qccl::usableComm(request->comm), request->id}});
  });
}

qcclResult_t qcclCancel(qcclRequest_t request) {
  return apiCall(__func__, [&] {
    if (request == nullptr) qccl::throwError(qcclInvalidArgument, "request is NULL");
    std::unique_ptr<qcclRequest> owned(request);
    qccl::cancelMessage(qccl::knownComm(request->comm), request->id);
  });
}

qcclResult_t qcclReduceEx(const void* sendbuff, void* recvbuff, size_t count,
                          qcclDataType_t datatype, qcclRedOp_t op, int root, qcclComm_t comm,
                          cudaStream_t stream, const qcclCallConfig_t* config) {
  return apiCall(__func__, [&] {
    qccl::runReduce(
        qccl::usableComm(comm),
        {qccl::CollectiveKind::AllReduce, sendbuff, recvbuff, count, datatype, op, stream, config},
        root);
  });
}

qcclResult_t qcclReduce(const void* sendbuff, void* recvbuff, size_t count, qcclDataType_t datatype,
                        qcclRedOp_t op, int root, qcclComm_t comm, cudaStream_t stream) {
  return qcclReduceEx(sendbuff, recvbuff, count, datatype, op, root, comm, stream, nullptr);
}

qcclResult_t qcclGather(const void* sendbuff, void* recvbuff, size_t count, qcclDataType_t datatype,
                        int root, qcclComm_t comm, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    qccl::runGather(qccl::usableComm(comm), sendbuff, recvbuff, count, datatype, root, stream);
  });
}

qcclResult_t qcclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         qcclDataType_t datatype, int root, qcclComm_t comm, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    qccl::runScatter(qccl::usableComm(comm), sendbuff, recvbuff, count, datatype, root, stream);
  });
}

}  // extern "C"
