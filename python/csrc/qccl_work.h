// The Work a qccl collective returns, with the output tensors as its future's value (what DDP's
// communication hooks read): on CPU tensors completed by the ordered worker (or failed with the
// error the call raised); on CUDA tensors complete when their stream has run the collective.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <vector>

namespace qccl::torch_backend {

class QcclWork : public c10d::Work {
 public:
  // devices: empty for CPU tensors, else the device whose stream runs the collective.
  QcclWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs,
           std::vector<c10::Device> devices = {});
  // A collective just enqueued on `stream`. Its future is completed at once, as a device future:
  // whoever reads the value waits, in stream order, for the collective.
  static c10::intrusive_ptr<QcclWork> enqueuedOn(int rank, c10d::OpType type,
                                                 std::vector<at::Tensor> outputs,
                                                 const c10::Stream& stream);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // CPU: waits for the collective and rethrows its error (the backend's own timeout bounds every
  // wait inside it, so `timeout` is not needed to end it). CUDA: makes the current stream wait
  // for it, as ProcessGroupNCCL's Work does.
  bool wait(std::chrono::milliseconds timeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // From the worker: the collective finished (error: null if it succeeded).
  void finish(std::exception_ptr error);
  // A receive from any source: who sent it, set before finish(nullptr).
  void setSourceRank(int rank) { sourceRank_ = rank; }
  int sourceRank() const override;

 private:
  std::vector<at::Tensor> outputs_;
  int sourceRank_ = -1;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::unique_ptr<c10::Event> done_;  // CUDA: recorded after the collective on its stream
};

}  // namespace qccl::torch_backend
