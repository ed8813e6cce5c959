// all_reduce of a sparse COO tensor (SUM), as gloo's: every rank's coordinates and values are
// gathered (exact), concatenated in rank order and coalesced, which sums the values of a
// coordinate that several ranks hold. Every rank computes the same result from the same bytes.
#include "qccl_backend.h"
#include "tensor_types.h"

namespace qccl::torch_backend {

namespace {

// An exact all-gather of `part` (the same shape on every rank) into a new tensor of world size
// times it, stacked along a new first dimension.
at::Tensor gatherExact(qcclComm_t comm, const at::Tensor& part, int64_t ranks) {
  std::vector<int64_t> shape{ranks};
  shape.insert(shape.end(), part.sizes().begin(), part.sizes().end());
  at::Tensor all = at::empty(shape, part.options());
  qcclCallConfig_t exact = QCCL_CALL_CONFIG_INITIALIZER;
  exact.flags = QCCL_CALL_EXACT;
  check(qcclAllGatherEx(part.data_ptr(), all.data_ptr(), size_t(part.numel()), qcclTypeOf(part),
                        comm, nullptr, &exact),
        "qcclAllGatherEx");
  return all;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> QcclBackend::sparseAllreduce(at::Tensor& tensor,
                                                            const c10d::AllreduceOptions& opts) {
  TORCH_CHECK(tensor.is_cpu(), "qccl backend: all_reduce of a sparse tensor takes a CPU tensor");
  TORCH_CHECK(opts.reduceOp == c10d::ReduceOp::SUM,
              "qccl backend: all_reduce of a sparse tensor sums (ReduceOp.SUM), as gloo's");
  qcclTypeOf(tensor._values());  // a dtype qccl moves (_values: coalesced or not)
  return enqueue(c10d::OpType::ALLREDUCE, {tensor}, [this, tensor]() mutable {
    const at::Tensor mine = tensor.coalesce();
    const int64_t n = getSize(), count = mine._nnz();
    const at::Tensor counts =
        gatherExact(comm_, at::full({1}, count, at::TensorOptions().dtype(at::kLong)), n);
    const int64_t most = counts.max().item<int64_t>();
    // Every rank's coordinates and values padded to the largest count, gathered exact.
    at::Tensor indices = at::zeros({mine.sparse_dim(), most}, mine.indices().options());
    indices.narrow(1, 0, count).copy_(mine.indices());
    std::vector<int64_t> valueShape = mine.values().sizes().vec();
    valueShape[0] = most;
    at::Tensor values = at::zeros(valueShape, mine.values().options());
    values.narrow(0, 0, count).copy_(mine.values());
    const at::Tensor allIndices = gatherExact(comm_, indices, n);
    const at::Tensor allValues = gatherExact(comm_, values, n);
    std::vector<at::Tensor> coordinates, parts;
    for (int64_t r = 0; r < n; ++r) {
      const int64_t k = counts[r].item<int64_t>();
      coordinates.push_back(allIndices[r].narrow(1, 0, k));
      parts.push_back(allValues[r].narrow(0, 0, k));
    }
    const at::Tensor sum =
        at::sparse_coo_tensor(at::cat(coordinates, 1), at::cat(parts, 0), mine.sizes()).coalesce();
    tensor.copy_(sum);
  });
}

}  // namespace qccl::torch_backend
