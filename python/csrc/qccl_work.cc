#include "qccl_work.h"

#include <c10/core/impl/VirtualGuardImpl.h>

namespace qccl::torch_backend {

QcclWork::QcclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
                   std::vector<c10::Device> devices)
    : Work(rank, type),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()), std::move(devices))) {}

c10::intrusive_ptr<QcclWork> QcclWork::enqueuedOn(int rank, c10d::OpType type,
                                                  std::vector<at::Tensor> outputs,
                                                  const c10::Stream& stream) {
  auto work = c10::make_intrusive<QcclWork>(rank, type, std::move(outputs),
                                            std::vector<c10::Device>{stream.device()});
  work->done_ = std::make_unique<c10::Event>(stream.device_type());
  work->done_->record(stream);
  work->finish(nullptr);  // a device future records its own event on the current stream
  return work;
}

bool QcclWork::isCompleted() { return done_ ? done_->query() : future_->completed(); }

bool QcclWork::isSuccess() const {
  return done_ ? done_->query() : future_->completed() && !future_->hasError();
}

std::exception_ptr QcclWork::exception() const {
  return future_->completed() && future_->hasError() ? future_->exception_ptr() : nullptr;
}

std::vector<at::Tensor> QcclWork::result() { return outputs_; }

bool QcclWork::wait(std::chrono::milliseconds) {
  if (done_) {
    const c10::Device device = future_->devices().front();
    done_->block(c10::impl::VirtualGuardImpl(device.type()).getStream(device));
    return true;
  }
  future_->wait();
  if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> QcclWork::getFuture() { return future_; }

int QcclWork::sourceRank() const {
  TORCH_CHECK(sourceRank_ >= 0,
              "qccl backend: the source rank is known only for a completed recv from any source");
  return sourceRank_;
}

void QcclWork::finish(std::exception_ptr error) {
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

}  // namespace qccl::torch_backend
