#include "qccl_work.h"

namespace qccl::torch_backend {

QcclWork::QcclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : Work(rank, type),
      outputs_(std::move(outputs)),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
}

bool QcclWork::isCompleted() { return future_->completed(); }

bool QcclWork::isSuccess() const { return future_->completed() && !future_->hasError(); }

std::exception_ptr QcclWork::exception() const {
  return future_->completed() && future_->hasError() ? future_->exception_ptr() : nullptr;
}

std::vector<at::Tensor> QcclWork::result() { return outputs_; }

bool QcclWork::wait(std::chrono::milliseconds) {
  future_->wait();
  if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> QcclWork::getFuture() { return future_; }

void QcclWork::finish(std::exception_ptr error) {
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

}  // namespace qccl::torch_backend
