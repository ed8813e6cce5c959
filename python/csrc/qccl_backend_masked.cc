// The shared-mask collectives and the mask exchange on CPU tensors (docs/ALGORITHMS.md,
// "Shared-mask collectives"), for qccl.torch's SCAPE-style optimizer (qccl/torch/scape.py).
#include "qccl_backend.h"
#include "tensor_types.h"

namespace qccl::torch_backend {

namespace {

// A contiguous uint8 CPU bitmap of at least `bits` bits.
void checkMask(const at::Tensor& mask, size_t bits, const char* what) {
  TORCH_CHECK(mask.is_cpu() && mask.scalar_type() == at::kByte && mask.is_contiguous(),
              "qccl backend: ", what,
              ": the mask must be a contiguous uint8 CPU tensor (a bitmap)");
  TORCH_CHECK(size_t(mask.numel()) * 8 >= bits, "qccl backend: ", what, ": the mask has ",
              mask.numel(), " bytes, fewer than the ", (bits + 7) / 8, " its ", bits,
              " elements need");
}

}  // namespace

MaskExchangeHandle::~MaskExchangeHandle() {
  if (exchange_ == nullptr) return;
  // Abandoned in flight: wait for it rather than leave messages writing into freed tensors.
  qcclMaskExchangeWait(exchange_);
}

bool MaskExchangeHandle::test() {
  TORCH_CHECK(exchange_ != nullptr || mask_.defined(), "qccl backend: the mask exchange failed");
  if (exchange_ == nullptr) return true;
  int done = 0;
  const qcclResult_t result = qcclMaskExchangeTest(exchange_, &done);
  if (result != qcclSuccess || done) exchange_ = nullptr;  // qccl freed it
  if (result != qcclSuccess) mask_ = at::Tensor();
  check(result, "qcclMaskExchangeTest");
  return done != 0;
}

void MaskExchangeHandle::wait() {
  TORCH_CHECK(exchange_ != nullptr || mask_.defined(), "qccl backend: the mask exchange failed");
  if (exchange_ == nullptr) return;
  const qcclResult_t result = qcclMaskExchangeWait(exchange_);
  exchange_ = nullptr;
  if (result != qcclSuccess) mask_ = at::Tensor();
  check(result, "qcclMaskExchangeWait");
}

c10::intrusive_ptr<c10d::Work> QcclBackend::maskedReduceScatter(at::Tensor& output,
                                                                at::Tensor& input,
                                                                const at::Tensor& mask,
                                                                const c10d::ReduceOp& op,
                                                                const CallSettings& call) {
  TORCH_CHECK(output.is_cpu() && input.is_cpu(),
              "qccl backend: masked_reduce_scatter takes CPU tensors");
  checkWorldSized(input, output, "masked_reduce_scatter: the input");
  checkMask(mask, size_t(input.numel()), "masked_reduce_scatter");
  const qcclRedOp_t qop = qcclOpOf(op);
  return launch(c10d::OpType::_REDUCE_SCATTER_BASE, {output}, output.device(),
                [this, output, input, mask, qop, call](cudaStream_t) mutable {
                  at::Tensor in = input.contiguous(), out = output.contiguous();
                  const qcclCallConfig_t config = callConfig(call);
                  check(qcclMaskedReduceScatter(in.data_ptr(), out.data_ptr(), size_t(out.numel()),
                                                qcclTypeOf(out), qop, mask.data_ptr<uint8_t>(),
                                                comm_, nullptr, &config),
                        "qcclMaskedReduceScatter");
                  writeBack(out, output);
                });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::maskedAllGather(at::Tensor& output, at::Tensor& input,
                                                            const at::Tensor& mask,
                                                            const CallSettings& call) {
  TORCH_CHECK(output.is_cpu() && input.is_cpu(),
              "qccl backend: masked_all_gather takes CPU tensors");
  checkWorldSized(output, input, "masked_all_gather: the output");
  checkMask(mask, size_t(output.numel()), "masked_all_gather");
  return launch(
      c10d::OpType::_ALLGATHER_BASE, {output}, output.device(),
      [this, output, input, mask, call](cudaStream_t) mutable {
        at::Tensor in = input.contiguous(), out = output.contiguous();
        const qcclCallConfig_t config = callConfig(call);
        check(qcclMaskedAllGather(in.data_ptr(), out.data_ptr(), size_t(in.numel()), qcclTypeOf(in),
                                  mask.data_ptr<uint8_t>(), comm_, nullptr, &config),
              "qcclMaskedAllGather");
        writeBack(out, output);
      });
}

std::shared_ptr<MaskExchangeHandle> QcclBackend::startMaskExchange(const at::Tensor& shardMask,
                                                                   const at::Tensor& mask,
                                                                   size_t shard, unsigned tag) {
  checkMask(shardMask, shard, "mask_exchange: shard_mask");
  checkMask(mask, shard * size_t(getSize()), "mask_exchange");
  qcclMaskExchange_t exchange = nullptr;
  check(qcclMaskExchangeStart(shardMask.data_ptr<uint8_t>(), mask.data_ptr<uint8_t>(), shard, tag,
                              comm_, &exchange),
        "qcclMaskExchangeStart");
  return std::make_shared<MaskExchangeHandle>(exchange, shardMask, mask);
}

}  // namespace qccl::torch_backend
