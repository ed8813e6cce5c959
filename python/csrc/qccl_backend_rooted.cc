// The rooted collectives of the `qccl` backend (reduce, gather, scatter) and the list form of a
// coalesced allgather: exact, over qccl's host-buffer calls (qcclReduce, qcclGather,
// qcclScatter); CUDA tensors are staged through CPU copies (docs/INTEGRATION.md).
#include "qccl_backend.h"
#include "qccl_work.h"
#include "tensor_types.h"

namespace qccl::torch_backend {

namespace {

size_t count(const at::Tensor& t) { return size_t(t.numel()); }

}  // namespace

c10::intrusive_ptr<c10d::Work> QcclBackend::reduce(std::vector<at::Tensor>& tensors,
                                                   const c10d::ReduceOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "qccl backend: reduce takes one tensor per process");
  checkTensors(tensors, "reduce");
  const qcclRedOp_t op = qcclOpOf(opts.reduceOp);
  const int root = int(opts.rootRank);
  at::Tensor t = tensors[0], host = hostCopy(t);
  return enqueue(c10d::OpType::REDUCE, tensors, [this, t, host, op, root]() mutable {
    check(qcclReduce(host.data_ptr(), host.data_ptr(), count(host), qcclTypeOf(host), op, root,
                     comm_, nullptr),
          "qcclReduce");
    if (getRank() == root) writeBack(host, t);
  });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                   std::vector<at::Tensor>& inputs,
                                                   const c10d::GatherOptions& opts) {
  TORCH_CHECK(inputs.size() == 1, "qccl backend: gather takes one input tensor per process");
  const int root = int(opts.rootRank);
  const bool atRoot = getRank() == root;
  TORCH_CHECK(atRoot ? outputs.size() == 1 : outputs.empty() || outputs[0].empty(),
              "qccl backend: gather: only the root (rank ", root, ") passes output tensors");
  std::vector<at::Tensor> outs = atRoot ? outputs[0] : std::vector<at::Tensor>{};
  checkTensors(inputs, outs, "gather");
  if (atRoot) checkWorldList(outs, inputs[0], "gather outputs");
  at::Tensor in = hostCopy(inputs[0]);
  return enqueue(c10d::OpType::GATHER, outs, [this, in, outs, root, atRoot]() mutable {
    at::Tensor all = atRoot ? at::empty({int64_t(outs.size()) * in.numel()}, in.options()) : in;
    check(
        qcclGather(in.data_ptr(), all.data_ptr(), count(in), qcclTypeOf(in), root, comm_, nullptr),
        "qcclGather");
    for (size_t r = 0; r < outs.size(); ++r) {
      outs[r].copy_(all.narrow(0, int64_t(r) * in.numel(), in.numel()).view(outs[r].sizes()));
    }
  });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::scatter(std::vector<at::Tensor>& outputs,
                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                    const c10d::ScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1, "qccl backend: scatter takes one output tensor per process");
  const int root = int(opts.rootRank);
  const bool atRoot = getRank() == root;
  TORCH_CHECK(atRoot ? inputs.size() == 1 : inputs.empty() || inputs[0].empty(),
              "qccl backend: scatter: only the root (rank ", root, ") passes input tensors");
  std::vector<at::Tensor> ins = atRoot ? inputs[0] : std::vector<at::Tensor>{};
  checkTensors(outputs, ins, "scatter");
  if (atRoot) checkWorldList(ins, outputs[0], "scatter inputs");
  at::Tensor out = outputs[0];
  at::Tensor all = atRoot ? hostCopy(at::cat(ins).reshape({-1})) : at::Tensor();
  return enqueue(c10d::OpType::SCATTER, outputs, [this, out, all, root]() mutable {
    at::Tensor host = hostCopy(out);
    check(qcclScatter(all.defined() ? all.data_ptr() : nullptr, host.data_ptr(), count(host),
                      qcclTypeOf(host), root, comm_, nullptr),
          "qcclScatter");
    writeBack(host, out);
  });
}

c10::intrusive_ptr<c10d::Work> QcclBackend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputLists.size() == size_t(getSize()),
              "qccl backend: allgather_coalesced: one output list per rank");
  for (const std::vector<at::Tensor>& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(),
                "qccl backend: allgather_coalesced: each output list matches the inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
      TORCH_CHECK(
          list[i].numel() == inputs[i].numel() && list[i].scalar_type() == inputs[i].scalar_type(),
          "qccl backend: allgather_coalesced: outputs must match the inputs' sizes");
    }
  }
  // The inputs flattened into one buffer, gathered once, and cut back into the lists.
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : inputs) flat.push_back(hostCopy(t).reshape({-1}));
  std::vector<at::Tensor> outputs;
  for (const auto& list : outputLists) outputs.insert(outputs.end(), list.begin(), list.end());
  checkTensors(inputs, outputs, "allgather_coalesced");
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.scalar_type() == inputs[0].scalar_type(),
                "qccl backend: allgather_coalesced: the inputs must share one type");
  }
  return enqueue(c10d::OpType::ALLGATHER_COALESCED, outputs, [this, flat, outputLists]() mutable {
    at::Tensor mine = at::cat(flat);
    at::Tensor all = at::empty({int64_t(getSize()) * mine.numel()}, mine.options());
    const qcclCallConfig_t exact = [] {
      qcclCallConfig_t c = QCCL_CALL_CONFIG_INITIALIZER;
      c.flags = QCCL_CALL_EXACT;
      return c;
    }();
    check(qcclAllGatherEx(mine.data_ptr(), all.data_ptr(), size_t(mine.numel()), qcclTypeOf(mine),
                          comm_, nullptr, &exact),
          "qcclAllGatherEx");
    for (size_t r = 0; r < outputLists.size(); ++r) {
      int64_t offset = int64_t(r) * mine.numel();
      for (at::Tensor& out : outputLists[r]) {
        out.copy_(all.narrow(0, offset, out.numel()).view(out.sizes()));
        offset += out.numel();
      }
    }
  });
}

}  // namespace qccl::torch_backend
