// Parameter all-gathers by changes (docs/INTEGRATION.md, "ZeRO-1/2: parameters by their changes"):
// ZeRO-1/2 optimizers keep every parameter on every rank in one persistent buffer and, after each
// step, all-gather the shards their ranks updated into it. Registered with gatherChanges, such a
// buffer's all-gathers run with QCCL_CALL_DELTA: each rank sends its shard's change against the
// last gathered value, and every rank's copy of the buffer stays bitwise the same.
#include "qccl_backend.h"
#include "tensor_types.h"

namespace qccl::torch_backend {

namespace {

// Changes: QCCL_CALL_DELTA, the last result being the owner's error feedback. Values: the codec
// alone, no residual kept (each call sends the whole value again, so no error accumulates).
qcclCallConfig_t gatherConfig(const ChangeGathered& target) {
  qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
  config.efKey = target.call.key;
  if (target.call.codec) config.codec = target.call.codec->c_str();
  config.flags = target.changes ? QCCL_CALL_DELTA : QCCL_CALL_NO_EF;
  return config;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> QcclBackend::gatherChanges(at::Tensor& buffer,
                                                          const CallSettings& call, bool changes) {
  TORCH_CHECK(buffer.is_cpu(),
              "qccl backend: gather_changes takes a CPU tensor (qccl's all-gather of changes "
              "runs on host transports)");
  TORCH_CHECK(buffer.is_contiguous(), "qccl backend: gather_changes takes a contiguous tensor");
  TORCH_CHECK(buffer.numel() % getSize() == 0, "qccl backend: gather_changes: the tensor's ",
              buffer.numel(), " elements do not split into ", getSize(), " equal shards");
  const at::ScalarType type = buffer.scalar_type();
  TORCH_CHECK(type == at::kFloat || type == at::kBFloat16 || type == at::kHalf,
              "qccl backend: gather_changes takes float32, bfloat16 or float16, not ", type);
  at::Tensor flat = buffer.view({-1});
  return launch(c10d::OpType::_ALLGATHER_BASE, {buffer}, buffer.device(),
                [this, flat, call, changes](cudaStream_t) {
                  const int64_t n = flat.numel() / getSize();
                  at::Tensor own = flat.narrow(0, int64_t(getRank()) * n, n);
                  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
                  exact.flags = QCCL_CALL_EXACT;
                  check(qcclAllGatherEx(own.data_ptr(), flat.data_ptr(), size_t(n),
                                        qcclTypeOf(flat), comm_, nullptr, &exact),
                        "qcclAllGatherEx");
                  ChangeGathered entry{flat, own.clone(), call, changes};
                  if (ChangeGathered* known = changeGathered(flat)) {
                    *known = entry;
                  } else {
                    changeGathered_.push_back(entry);
                  }
                });
}

ChangeGathered* QcclBackend::changeGathered(const at::Tensor& output) {
  if (!output.is_cpu() || !output.is_contiguous()) return nullptr;
  for (ChangeGathered& entry : changeGathered_) {
    if (entry.buffer.data_ptr() == output.data_ptr() && entry.buffer.numel() == output.numel() &&
        entry.buffer.scalar_type() == output.scalar_type()) {
      return &entry;
    }
  }
  return nullptr;
}

void QcclBackend::gatherChangesInto(ChangeGathered& target, const at::Tensor& input) {
  const int64_t n = input.numel();
  at::Tensor own = target.buffer.narrow(0, int64_t(getRank()) * n, n);
  // The shard's new values, apart: in ZeRO's in-place form `input` is `own`, which must hold the
  // last result again for the change to be taken against it (and qccl refuses an input inside
  // the output of a delta all-gather).
  const at::Tensor next = input.reshape({-1}).clone();
  if (target.changes) own.copy_(target.ownReplica);
  const qcclCallConfig_t config = gatherConfig(target);
  uint64_t sentBefore = 0, sentAfter = 0, received = 0;
  check(qcclCommWireBytes(comm_, &sentBefore, &received), "qcclCommWireBytes");
  const qcclResult_t result = qcclAllGatherEx(next.data_ptr(), target.buffer.data_ptr(), size_t(n),
                                              qcclTypeOf(next), comm_, nullptr, &config);
  if (result != qcclSuccess) own.copy_(next);  // the caller's new values are not lost
  check(result, target.changes ? "qcclAllGatherEx (QCCL_CALL_DELTA)" : "qcclAllGatherEx");
  if (target.changes) target.ownReplica.copy_(own);
  check(qcclCommWireBytes(comm_, &sentAfter, &received), "qcclCommWireBytes");
  target.sentBytes += sentAfter - sentBefore;
}

uint64_t QcclBackend::changesSentBytes() {
  uint64_t sent = 0;
  runInOrder([this, &sent] {
    for (const ChangeGathered& entry : changeGathered_) sent += entry.sentBytes;
  });
  return sent;
}

}  // namespace qccl::torch_backend
