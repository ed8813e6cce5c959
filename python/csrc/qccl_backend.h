// The `qccl` torch.distributed backend: a c10d::Backend over qccl's C API (include/qccl/qccl.h).
// One qccl communicator per process group, bootstrapped through the group's store (rank 0's
// unique id under "qccl_unique_id"); collectives on CPU tensors run in issue order on one worker
// thread and return at once with an asynchronous Work; on CUDA tensors they are enqueued on the
// current stream (docs/INTEGRATION.md, "PyTorch: the qccl backend").
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ordered_worker.h"
#include "p2p_completer.h"
#include "qccl/qccl.h"

namespace qccl::torch_backend {

// qccl.torch.Options: what is unset comes from the QCCL_* environment (docs/ENV.md).
struct BackendOptions {
  std::optional<std::string> codec;
  std::optional<std::string> transport;
  std::optional<std::string> algorithm;
  std::optional<size_t> minBytes;
  std::optional<bool> errorFeedback;
  std::optional<std::string> efDtype;  // "fp32" or "bf16"
  std::optional<float> efDecay;
};

// Per-call settings of the collectives qccl.torch calls directly (qcclCallConfig_t): what is unset
// is the group's.
struct CallSettings {
  uint64_t key = 0;  // error-feedback key; 0: derived from the buffer's address
  std::optional<std::string> codec;
  std::optional<float> efDecay;
  bool exact = false;         // QCCL_CALL_EXACT
  bool errorFeedback = true;  // false: QCCL_CALL_NO_EF
  bool anySize = false;       // QCCL_CALL_COMPRESS: compressed whatever the size
};

// A buffer whose all-gathers send each rank's change (QCCL_CALL_DELTA; QcclBackend::gatherChanges),
// or, registered with changes false, each rank's values encoded without error feedback (ZeRO++'s
// quantized weights, qwZ).
struct ChangeGathered {
  at::Tensor buffer;      // flat, contiguous, CPU
  at::Tensor ownReplica;  // this rank's shard as the last all-gather left it on every rank
  CallSettings call;
  bool changes = true;
  uint64_t sentBytes = 0;  // what this rank's gathers into it have sent (qcclCommWireBytes)
};

// An exchange of shard masks in flight (qcclMaskExchangeStart): test() and wait() complete it; the
// tensors it reads and writes are kept alive until then. Dropped while in flight, it cancels.
class MaskExchangeHandle {
 public:
  MaskExchangeHandle(qcclMaskExchange_t exchange, at::Tensor shardMask, at::Tensor mask)
      : exchange_(exchange), shardMask_(std::move(shardMask)), mask_(std::move(mask)) {}
  MaskExchangeHandle(const MaskExchangeHandle&) = delete;
  MaskExchangeHandle& operator=(const MaskExchangeHandle&) = delete;
  ~MaskExchangeHandle();
  bool test();  // whether every shard's mask is in `mask`; throws for a failed exchange
  void wait();

 private:
  qcclMaskExchange_t exchange_;  // null once completed or failed (qccl freed it)
  at::Tensor shardMask_, mask_;
};

class QcclBackend : public c10d::Backend {
 public:
  QcclBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
              std::chrono::milliseconds timeout, const BackendOptions& options);
  // Over a communicator made already (shrunk, grown); the backend destroys it.
  QcclBackend(qcclComm_t comm, std::chrono::milliseconds timeout);
  ~QcclBackend() override;

  // Elastic membership (qccl_backend_elastic.cc; qccl/torch/elastic.py): each runs after the
  // collectives queued before it and returns a backend over the new communicator; this one stays
  // as it is (failed or not) until it is dropped.
  // qcclCommShrink naming `exclude` (the survivors agree on who else is gone), cancelling the
  // point-to-point messages still pending.
  c10::intrusive_ptr<QcclBackend> shrink(const std::vector<int>& exclude);
  // qcclCommGetUniqueId: the id new ranks join this group's next grow with.
  std::vector<uint8_t> growUniqueId();
  // A member's qcclCommGrow; `id`: the one growUniqueId gave, on that member only.
  c10::intrusive_ptr<QcclBackend> grow(int size, const std::optional<std::vector<uint8_t>>& id);
  // A new process's qcclCommGrow, with the settings of `options`.
  static c10::intrusive_ptr<QcclBackend> join(int size, const std::vector<uint8_t>& id, int rank,
                                              std::chrono::milliseconds timeout,
                                              const BackendOptions& options);

  const std::string getBackendName() const override { return "qccl"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  // The single-tensor forms under their older names (_allgather_base, _reduce_scatter_base and
  // the *_tensor_coalesced ones), which torch 2.11 declares and 2.15's all_gather_single /
  // reduce_scatter_single forward to: the backend builds against both.
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // Exact, on host memory (CUDA tensors staged through CPU copies; qccl_backend_rooted.cc).
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;

  // Point-to-point (qccl_backend_p2p.cc): sends and receives complete in the background
  // (p2p_completer.h); all-to-all as one group of messages, uneven splits too.
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  // Rank 0 waits for every rank, at most the timeout, and names the ranks that did not come.
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) override;
  // The collectives this process has issued on the group, as gloo counts them: torch compares it
  // across ranks (TORCH_DISTRIBUTED_DEBUG=DETAIL, subgroups' object collectives) to catch
  // collectives issued out of step.
  uint64_t getSequenceNumberForGroup() override { return sequence_.load(); }

  // The compressed collectives with per-call settings (an explicit error-feedback key, codec,
  // decay), for the DDP hook, the FSDP2 comms and the outer loops (qccl/torch/ddp.py, fsdp.py,
  // diloco.py).
  c10::intrusive_ptr<c10d::Work> allreduceWith(at::Tensor& tensor, const c10d::ReduceOp& op,
                                               const CallSettings& call);
  c10::intrusive_ptr<c10d::Work> reduceScatterWith(at::Tensor& output, at::Tensor& input,
                                                   const c10d::ReduceOp& op,
                                                   const CallSettings& call);
  c10::intrusive_ptr<c10d::Work> allGatherWith(at::Tensor& output, at::Tensor& input,
                                               const CallSettings& call);
  // The bytes this rank's collectives have sent and received (qcclCommWireBytes), after the
  // collectives queued before.
  std::pair<uint64_t, uint64_t> wireBytes();
  // The communicator's error-feedback state (qcclEfStateSave), after the collectives queued
  // before; and loading one (qcclEfStateLoad).
  std::vector<uint8_t> efState();
  void loadEfState(const std::vector<uint8_t>& state);
  void resetEf(uint64_t key);  // qcclEfReset: 0 drops every key's residuals
  // From now on an all_gather_into_tensor into `buffer` sends each rank's change against the last
  // result, as `call` says (codec, key): ZeRO-1/2's parameter all-gather (qccl/torch/zero.py,
  // docs/INTEGRATION.md "ZeRO-1/2: parameters by their changes"). First an exact all-gather of
  // this rank's shard of `buffer` into it makes every rank's copy the same. Registering a buffer
  // again replaces its settings and makes the copies the same again. changes false: the
  // all-gathers send each rank's values instead, encoded without error feedback.
  c10::intrusive_ptr<c10d::Work> gatherChanges(at::Tensor& buffer, const CallSettings& call,
                                               bool changes = true);
  // The bytes this rank's all-gathers into registered buffers have sent since they were
  // registered, after the collectives queued before.
  uint64_t changesSentBytes();
  // The shared-mask collectives (qcclMaskedReduceScatter / qcclMaskedAllGather, docs/ALGORITHMS.md
  // "Shared-mask collectives") on CPU tensors, in issue order with the others: `mask` a uint8
  // bitmap over the whole buffer, the same on every rank; outputs written under it only.
  c10::intrusive_ptr<c10d::Work> maskedReduceScatter(at::Tensor& output, at::Tensor& input,
                                                     const at::Tensor& mask,
                                                     const c10d::ReduceOp& op,
                                                     const CallSettings& call);
  c10::intrusive_ptr<c10d::Work> maskedAllGather(at::Tensor& output, at::Tensor& input,
                                                 const at::Tensor& mask, const CallSettings& call);
  // Starts sending this rank's shard mask (`shard` bits of shardMask) to every rank into `mask`
  // (qcclMaskExchangeStart under `tag`): returns at once, its messages complete in the background.
  std::shared_ptr<MaskExchangeHandle> startMaskExchange(const at::Tensor& shardMask,
                                                        const at::Tensor& mask, size_t shard,
                                                        unsigned tag);

 private:
  // all_reduce of a sparse COO tensor (qccl_backend_sparse.cc).
  c10::intrusive_ptr<c10d::Work> sparseAllreduce(at::Tensor& tensor,
                                                 const c10d::AllreduceOptions& opts);
  // Runs a collective on tensors of `device`: CPU tensors on the worker thread (job gets a NULL
  // stream), device tensors on the device's current stream; returns its Work, whose value is
  // `outputs`. A thrown error fails the Work (CPU) or the call (device).
  c10::intrusive_ptr<c10d::Work> launch(c10d::OpType type, std::vector<at::Tensor> outputs,
                                        c10::Device device, std::function<void(cudaStream_t)> job);
  // Queues job on the worker thread and returns its Work, whose value is `outputs`.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> outputs,
                                         std::function<void()> job);
  // A list form's tensors: one per rank, each of `like`'s size and type.
  void checkWorldList(const std::vector<at::Tensor>& list, const at::Tensor& like,
                      const char* what) const;
  // `whole` holds world size times `part`'s elements, of its type.
  void checkWorldSized(const at::Tensor& whole, const at::Tensor& part, const char* what) const;
  // Runs job on the worker after what is queued, and waits for it.
  void runInOrder(std::function<void()> job);
  // Sends or receives (qcclIsend / qcclIrecv) `tensor` with `peer`: its Work completes in the
  // background. A receive from peer kAnySource takes whichever rank sends (recvAnysource).
  c10::intrusive_ptr<c10d::Work> message(bool send, at::Tensor tensor, int peer, int tag);
  static constexpr int kAnySource = -1;
  // On the worker: every rank's block to and from every rank in one group of messages (the
  // all-to-all forms).
  void exchangeBlocks(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in);
  // On the worker (qccl_backend_changes.cc): the registered buffer that `output` is, or null; and
  // the all-gather of `input` into it by changes.
  ChangeGathered* changeGathered(const at::Tensor& output);
  void gatherChangesInto(ChangeGathered& target, const at::Tensor& input);

  qcclComm_t comm_ = nullptr;
  std::atomic<uint64_t> sequence_{0};  // collectives issued (getSequenceNumberForGroup)
  std::chrono::milliseconds timeout_;
  std::unique_ptr<OrderedWorker> worker_;       // stopped (drained) before the communicator goes
  std::unique_ptr<P2pCompleter> completer_;     // likewise
  std::vector<ChangeGathered> changeGathered_;  // touched on the worker thread only
};

// The tensor's bytes as a contiguous CPU tensor: itself when it is one, else a copy (CUDA: taken
// on the caller's current stream, blocking).
at::Tensor hostCopy(const at::Tensor& t);
// Writes `host` into `out` unless they are the same tensor.
void writeBack(const at::Tensor& host, at::Tensor& out);

// call's settings as a qcclCallConfig_t; call (its codec string) must outlive the result.
qcclCallConfig_t callConfig(const CallSettings& call);

// Throws std::runtime_error with qccl's message for a failed call.
void check(qcclResult_t result, const char* what);

// The communicator's config for `options` (its strings point into them) and the group's timeout.
qcclConfig_t configOf(const BackendOptions& options, std::chrono::milliseconds timeout);

// How long a group waits when torch gives it no timeout.
constexpr std::chrono::milliseconds kDefaultTimeout(300000);

}  // namespace qccl::torch_backend
