#include "qccl_backend.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <cstring>
#include <stdexcept>

#include "qccl_work.h"
#include "tensor_types.h"

namespace qccl::torch_backend {

namespace {

constexpr char kUniqueIdKey[] = "qccl_unique_id";

// The tensor's bytes as qccl reads or writes them: itself when contiguous, else a contiguous
// copy (written back by finishOutput).
at::Tensor contiguousView(const at::Tensor& t) { return t.contiguous(); }

void finishOutput(const at::Tensor& computed, at::Tensor& output) {
  if (!computed.is_same(output)) output.copy_(computed);
}

size_t count(const at::Tensor& t) { return size_t(t.numel()); }

}  // namespace

qcclCallConfig_t callConfig(const CallSettings& call) {
  qcclCallConfig_t config = QCCL_CALL_CONFIG_INITIALIZER;
  config.efKey = call.key;
  if (call.codec) config.codec = call.codec->c_str();
  if (call.efDecay) config.efDecay = *call.efDecay;
  if (call.exact) config.flags |= QCCL_CALL_EXACT;
  if (!call.errorFeedback) config.flags |= QCCL_CALL_NO_EF;
  if (call.anySize) config.flags |= QCCL_CALL_COMPRESS;
  return config;
}

void QcclBackend::checkWorldList(const std::vector<at::Tensor>& list, const at::Tensor& like,
                                 const char* what) const {
  TORCH_CHECK(int(list.size()) == getSize(), "qccl backend: ", what, ": ", list.size(),
              " tensors for ", getSize(), " ranks");
  for (const at::Tensor& t : list) {
    TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(),
                "qccl backend: ", what, " must match the other side's size and type");
  }
}

void QcclBackend::checkWorldSized(const at::Tensor& whole, const at::Tensor& part,
                                  const char* what) const {
  TORCH_CHECK(
      whole.numel() == part.numel() * getSize() && whole.scalar_type() == part.scalar_type(),
      "qccl backend: ", what, " must hold world size times the other side, of its type");
}

at::Tensor hostCopy(const at::Tensor& t) {
  return t.is_cpu() ? t.contiguous() : t.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
}

void writeBack(const at::Tensor& host, at::Tensor& out) {
  if (!host.is_same(out)) out.copy_(host);
}

void check(qcclResult_t result, const char* what) {
  if (result == qcclSuccess) return;
  // A timeout says so in the words torch's backends use ("Timed out"), which callers match on.
  const std::string kind = result == qcclTimeout
                               ? std::string("Timed out (") + qcclGetErrorString(result) + ")"
                               : qcclGetErrorString(result);
  throw std::runtime_error(std::string("qccl: ") + what + " failed: " + kind + ": " +
                           qcclGetLastError(nullptr));
}

qcclConfig_t configOf(const BackendOptions& options, std::chrono::milliseconds timeout) {
  qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
  if (options.codec) config.codec = options.codec->c_str();
  if (options.transport) config.transport = options.transport->c_str();
  if (options.algorithm) config.algorithm = options.algorithm->c_str();
  if (options.minBytes) config.minBytes = *options.minBytes;
  if (options.errorFeedback) config.errorFeedback = *options.errorFeedback ? 1 : 0;
  if (options.efDtype) {
    TORCH_CHECK(*options.efDtype == "fp32" || *options.efDtype == "bf16",
                "qccl backend: ef_dtype must be 'fp32' or 'bf16', not '", *options.efDtype, "'");
    config.efDtype = *options.efDtype == "fp32" ? qcclFloat32 : qcclBfloat16;
  }
  if (options.efDecay) config.efDecay = *options.efDecay;
  if (timeout.count() > 0 && timeout.count() < INT32_MAX) config.timeoutMs = int(timeout.count());
  return config;
}

QcclBackend::QcclBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                         std::chrono::milliseconds timeout, const BackendOptions& options)
    : Backend(rank, size), timeout_(timeout.count() > 0 ? timeout : kDefaultTimeout) {
  qcclUniqueId id;
  if (rank == 0) {
    check(qcclGetUniqueId(&id), "qcclGetUniqueId");
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal));
  } else {
    const std::vector<uint8_t> bytes = store->get(kUniqueIdKey);
    TORCH_CHECK(bytes.size() == sizeof id.internal, "qccl backend: bad unique id in the store");
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  }
  qcclConfig_t config = configOf(options, timeout);
  check(qcclCommInitRankConfig(&comm_, size, id, rank, &config), "qcclCommInitRankConfig");
  worker_ = std::make_unique<OrderedWorker>();
  completer_ = std::make_unique<P2pCompleter>(timeout_);
}

namespace {
int rankOf(qcclComm_t comm) {
  int rank = -1;
  check(qcclCommUserRank(comm, &rank), "qcclCommUserRank");
  return rank;
}
int sizeOf(qcclComm_t comm) {
  int size = 0;
  check(qcclCommCount(comm, &size), "qcclCommCount");
  return size;
}
}  // namespace

QcclBackend::QcclBackend(qcclComm_t comm, std::chrono::milliseconds timeout)
    : Backend(rankOf(comm), sizeOf(comm)),
      comm_(comm),
      timeout_(timeout),
      worker_(std::make_unique<OrderedWorker>()),
      completer_(std::make_unique<P2pCompleter>(timeout)) {}

QcclBackend::~QcclBackend() {
  worker_.reset();     // finishes the queued collectives
  completer_.reset();  // fails the messages still pending
  if (comm_) qcclCommDestroy(comm_);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::launch(c10d::OpType type,
                                                   std::vector<at::Tensor> outputs,
                                                   c10::Device device,
                                                   std::function<void(cudaStream_t)> job) {
  if (device.is_cpu()) {
    return enqueue(type, std::move(outputs), [job = std::move(job)] { job(nullptr); });
  }
  // Device tensors: enqueued here on the device's current stream, as ProcessGroupNCCL enqueues
  // (the caller's later work on that stream is ordered after it; memory the caller frees is
  // reused in stream order), once the collectives queued before it have run, so that every rank
  // keeps one order.
  runInOrder([] {});
  ++sequence_;
  const c10::DeviceGuard guard(device);
  const c10::Stream stream = c10::impl::VirtualGuardImpl(device.type()).getStream(device);
  job(static_cast<cudaStream_t>(stream.native_handle()));
  return QcclWork::enqueuedOn(getRank(), type, std::move(outputs), stream);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::enqueue(c10d::OpType type,
                                                    std::vector<at::Tensor> outputs,
                                                    std::function<void()> job) {
  if (type != c10d::OpType::UNKNOWN) ++sequence_;  // UNKNOWN: runInOrder's jobs, no collective
  auto work = c10::make_intrusive<QcclWork>(getRank(), type, std::move(outputs));
  worker_->submit([work, job = std::move(job)] {
    try {
      job();
      work->finish(nullptr);
    } catch (...) {
      work->finish(std::current_exception());
    }
  });
  return work;
}

c10::intrusive_ptr<c10d::Work> QcclBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                      const c10d::BroadcastOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "qccl backend: broadcast takes one tensor per process");
  const c10::Device device = checkTensors(tensors, "broadcast");
  at::Tensor t = tensors[0];
  const int root = int(opts.rootRank);
  return launch(
      c10d::OpType::BROADCAST, tensors, device, [this, t, root](cudaStream_t stream) mutable {
        at::Tensor c = contiguousView(t);
        check(
            qcclBroadcast(c.data_ptr(), c.data_ptr(), count(c), qcclTypeOf(c), root, comm_, stream),
            "qcclBroadcast");
        finishOutput(c, t);
      });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::AllreduceOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "qccl backend: allreduce takes one tensor per process");
  if (tensors[0].is_sparse()) return sparseAllreduce(tensors[0], opts);
  c10d::AllreduceCoalescedOptions coalesced;
  coalesced.reduceOp = opts.reduceOp;
  return allreduce_coalesced(tensors, coalesced);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  const c10::Device device = checkTensors(tensors, "allreduce");
  const qcclRedOp_t op = qcclOpOf(opts.reduceOp);
  return launch(
      c10d::OpType::ALLREDUCE, tensors, device, [this, tensors, op](cudaStream_t stream) mutable {
        for (at::Tensor& t : tensors) {
          at::Tensor c = contiguousView(t);
          check(
              qcclAllReduce(c.data_ptr(), c.data_ptr(), count(c), qcclTypeOf(c), op, comm_, stream),
              "qcclAllReduce");
          finishOutput(c, t);
        }
      });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::AllgatherOptions&) {
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1,
              "qccl backend: allgather takes one input and one list of outputs");
  const c10::Device device = checkTensors(inputs, outputs[0], "allgather");
  checkWorldList(outputs[0], inputs[0], "allgather outputs");
  at::Tensor in = inputs[0];
  std::vector<at::Tensor> outs = outputs[0];
  return launch(
      c10d::OpType::ALLGATHER, outs, device, [this, in, outs](cudaStream_t stream) mutable {
        at::Tensor c = contiguousView(in);
        at::Tensor flat = at::empty({int64_t(outs.size()) * c.numel()}, c.options());
        check(qcclAllGather(c.data_ptr(), flat.data_ptr(), count(c), qcclTypeOf(c), comm_, stream),
              "qcclAllGather");
        for (size_t r = 0; r < outs.size(); ++r) {
          outs[r].copy_(flat.narrow(0, int64_t(r) * c.numel(), c.numel()).view(outs[r].sizes()));
        }
      });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                            const c10d::AllgatherOptions& opts) {
  std::vector<at::Tensor> outputs{output}, inputs{input};
  return allgather_into_tensor_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputs.size() == inputs.size(), "qccl backend: allgather: unmatched tensor lists");
  const c10::Device device = checkTensors(inputs, outputs, "allgather");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkWorldSized(outputs[i], inputs[i], "all_gather_into_tensor: the output");
  }
  return launch(c10d::OpType::_ALLGATHER_BASE, outputs, device,
                [this, outputs, inputs](cudaStream_t stream) mutable {
                  for (size_t i = 0; i < inputs.size(); ++i) {
                    ChangeGathered* registered = stream ? nullptr : changeGathered(outputs[i]);
                    if (registered) {
                      gatherChangesInto(*registered, inputs[i]);
                      continue;
                    }
                    at::Tensor in = contiguousView(inputs[i]), out = contiguousView(outputs[i]);
                    check(qcclAllGather(in.data_ptr(), out.data_ptr(), count(in), qcclTypeOf(in),
                                        comm_, stream),
                          "qcclAllGather");
                    finishOutput(out, outputs[i]);
                  }
                });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1,
              "qccl backend: reduce_scatter takes one output and one list of inputs");
  const c10::Device device = checkTensors(outputs, inputs[0], "reduce_scatter");
  checkWorldList(inputs[0], outputs[0], "reduce_scatter inputs");
  const qcclRedOp_t op = qcclOpOf(opts.reduceOp);
  at::Tensor out = outputs[0];
  std::vector<at::Tensor> ins = inputs[0];
  return launch(c10d::OpType::REDUCE_SCATTER, outputs, device,
                [this, out, ins, op](cudaStream_t stream) mutable {
                  std::vector<at::Tensor> flat;
                  for (const at::Tensor& i : ins) flat.push_back(i.reshape({-1}));
                  at::Tensor in = at::cat(flat), c = contiguousView(out);
                  check(qcclReduceScatter(in.data_ptr(), c.data_ptr(), count(c), qcclTypeOf(c), op,
                                          comm_, stream),
                        "qcclReduceScatter");
                  finishOutput(c, out);
                });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  std::vector<at::Tensor> outputs{output}, inputs{input};
  return reduce_scatter_tensor_coalesced(outputs, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> QcclBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(),
              "qccl backend: reduce_scatter: unmatched tensor lists");
  const c10::Device device = checkTensors(inputs, outputs, "reduce_scatter");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkWorldSized(inputs[i], outputs[i], "reduce_scatter_tensor: the input");
  }
  const qcclRedOp_t op = qcclOpOf(opts.reduceOp);
  return launch(c10d::OpType::_REDUCE_SCATTER_BASE, outputs, device,
                [this, outputs, inputs, op](cudaStream_t stream) mutable {
                  for (size_t i = 0; i < inputs.size(); ++i) {
                    at::Tensor in = contiguousView(inputs[i]), out = contiguousView(outputs[i]);
                    check(qcclReduceScatter(in.data_ptr(), out.data_ptr(), count(out),
                                            qcclTypeOf(out), op, comm_, stream),
                          "qcclReduceScatter");
                    finishOutput(out, outputs[i]);
                  }
                });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allreduceWith(at::Tensor& tensor,
                                                          const c10d::ReduceOp& op,
                                                          const CallSettings& call) {
  const c10::Device device = checkTensors({tensor}, "allreduce");
  const qcclRedOp_t qop = qcclOpOf(op);
  return launch(c10d::OpType::ALLREDUCE, {tensor}, device,
                [this, tensor, qop, call](cudaStream_t stream) mutable {
                  at::Tensor c = contiguousView(tensor);
                  const qcclCallConfig_t config = callConfig(call);
                  check(qcclAllReduceEx(c.data_ptr(), c.data_ptr(), count(c), qcclTypeOf(c), qop,
                                        comm_, stream, &config),
                        "qcclAllReduceEx");
                  finishOutput(c, tensor);
                });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::reduceScatterWith(at::Tensor& output, at::Tensor& input,
                                                              const c10d::ReduceOp& op,
                                                              const CallSettings& call) {
  const c10::Device device = checkTensors({output, input}, "reduce_scatter");
  checkWorldSized(input, output, "reduce_scatter: the input");
  const qcclRedOp_t qop = qcclOpOf(op);
  return launch(c10d::OpType::_REDUCE_SCATTER_BASE, {output}, device,
                [this, output, input, qop, call](cudaStream_t stream) mutable {
                  at::Tensor in = contiguousView(input), out = contiguousView(output);
                  const qcclCallConfig_t config = callConfig(call);
                  check(qcclReduceScatterEx(in.data_ptr(), out.data_ptr(), count(out),
                                            qcclTypeOf(out), qop, comm_, stream, &config),
                        "qcclReduceScatterEx");
                  finishOutput(out, output);
                });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allGatherWith(at::Tensor& output, at::Tensor& input,
                                                          const CallSettings& call) {
  const c10::Device device = checkTensors({output, input}, "all_gather");
  checkWorldSized(output, input, "all_gather: the output");
  return launch(c10d::OpType::_ALLGATHER_BASE, {output}, device,
                [this, output, input, call](cudaStream_t stream) mutable {
                  at::Tensor in = contiguousView(input), out = contiguousView(output);
                  const qcclCallConfig_t config = callConfig(call);
                  check(qcclAllGatherEx(in.data_ptr(), out.data_ptr(), count(in), qcclTypeOf(in),
                                        comm_, stream, &config),
                        "qcclAllGatherEx");
                  finishOutput(out, output);
                });
}

void QcclBackend::runInOrder(std::function<void()> job) {
  enqueue(c10d::OpType::UNKNOWN, {}, std::move(job))->wait(std::chrono::milliseconds(0));
}

std::vector<uint8_t> QcclBackend::efState() {
  std::vector<uint8_t> state;
  runInOrder([this, &state] {
    size_t bytes = 0;
    check(qcclEfStateSize(comm_, &bytes), "qcclEfStateSize");
    state.resize(bytes);
    check(qcclEfStateSave(comm_, state.data(), bytes), "qcclEfStateSave");
  });
  return state;
}

std::pair<uint64_t, uint64_t> QcclBackend::wireBytes() {
  std::pair<uint64_t, uint64_t> bytes;
  runInOrder([this, &bytes] {
    check(qcclCommWireBytes(comm_, &bytes.first, &bytes.second), "qcclCommWireBytes");
  });
  return bytes;
}

void QcclBackend::resetEf(uint64_t key) {
  runInOrder([this, key] { check(qcclEfReset(comm_, key), "qcclEfReset"); });
}

void QcclBackend::loadEfState(const std::vector<uint8_t>& state) {
  runInOrder([this, &state] {
    check(qcclEfStateLoad(comm_, state.data(), state.size()), "qcclEfStateLoad");
  });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::barrier(const c10d::BarrierOptions&) {
  return enqueue(c10d::OpType::BARRIER, {},
                 [this] { check(qcclBarrier(comm_, nullptr), "qcclBarrier"); });
}

}  // namespace qccl::torch_backend
