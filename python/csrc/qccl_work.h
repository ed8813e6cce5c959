// The Work a qccl collective returns: completed by the ordered worker, with the output tensors
// as its future's value (what DDP's communication hooks read) or the error the call raised.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <vector>

namespace qccl::torch_backend {

class QcclWork : public c10d::Work {
 public:
  QcclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // Waits for the collective; rethrows its error. The backend's own timeout bounds every wait
  // inside the collective, so `timeout` is not needed to end it.
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // From the worker: the collective finished (error: null if it succeeded).
  void finish(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace qccl::torch_backend
