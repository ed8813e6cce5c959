// The mask exchange of the shared-mask collectives (src/comm/mask_exchange.h): a handle around
// it, freed when it completes or fails, as qcclTest and qcclWait free a request.
#include <memory>

#include "src/api/api_guard.h"
#include "src/comm/mask_exchange.h"

struct qcclMaskExchange {
  qccl::MaskExchange exchange;
};

using qccl::apiCall;

extern "C" {

qcclResult_t qcclMaskExchangeStart(const uint8_t* shardMask, uint8_t* mask, size_t shardcount,
                                   unsigned int tag, qcclComm_t comm,
                                   qcclMaskExchange_t* exchange) {
  return apiCall(__func__, [&] {
    if (exchange == nullptr) qccl::throwError(qcclInvalidArgument, "exchange is NULL");
    *exchange = nullptr;
    *exchange = new qcclMaskExchange{
        qccl::MaskExchange(qccl::usableComm(comm), shardMask, mask, shardcount, tag)};
  });
}

qcclResult_t qcclMaskExchangeTest(qcclMaskExchange_t exchange, int* done) {
  return apiCall(__func__, [&] {
    if (exchange == nullptr || done == nullptr) {
      qccl::throwError(qcclInvalidArgument, "%s is NULL",
                       exchange == nullptr ? "exchange" : "done");
    }
    std::unique_ptr<qcclMaskExchange> owned(exchange);  // freed when done or failed
    *done = owned->exchange.test() ? 1 : 0;
    if (!*done) owned.release();
  });
}

qcclResult_t qcclMaskExchangeWait(qcclMaskExchange_t exchange) {
  return apiCall(__func__, [&] {
    if (exchange == nullptr) qccl::throwError(qcclInvalidArgument, "exchange is NULL");
    std::unique_ptr<qcclMaskExchange> owned(exchange);
    owned->exchange.wait();
  });
}

}  // extern "C"
