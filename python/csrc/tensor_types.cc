#include "tensor_types.h"

namespace qccl::torch_backend {

qcclDataType_t qcclTypeOf(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return qcclFloat32;
    case at::kBFloat16: return qcclBfloat16;
    case at::kHalf: return qcclFloat16;
    case at::kDouble: return qcclFloat64;
    case at::kChar: return qcclInt8;
    case at::kByte:
    case at::kBool: return qcclUint8;  // as NCCL: bools travel as bytes
    case at::kInt: return qcclInt32;
    case at::kLong: return qcclInt64;
    case at::kFloat8_e4m3fn: return qcclFloat8e4m3;
    case at::kFloat8_e5m2: return qcclFloat8e5m2;
    default:
      TORCH_CHECK(false, "qccl backend: tensors of type ", tensor.scalar_type(),
                  " are not supported");
  }
}

qcclRedOp_t qcclOpOf(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return qcclSum;
    case c10d::ReduceOp::AVG: return qcclAvg;
    case c10d::ReduceOp::PRODUCT: return qcclProd;
    case c10d::ReduceOp::MIN: return qcclMin;
    case c10d::ReduceOp::MAX: return qcclMax;
    case c10d::ReduceOp::BAND: return qcclBitwiseAnd;
    case c10d::ReduceOp::BOR: return qcclBitwiseOr;
    case c10d::ReduceOp::BXOR: return qcclBitwiseXor;
    default:
      TORCH_CHECK(false, "qccl backend: reduce op ", int(op.op_),
                  " is not supported (SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR are)");
  }
}

c10::Device checkTensors(const std::vector<at::Tensor>& tensors, const char* what) {
  TORCH_CHECK(!tensors.empty(), "qccl backend: ", what, ": no tensors");
  const c10::Device device = tensors[0].device();
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.device() == device, "qccl backend: ", what, ": tensors on ", device, " and ",
                t.device(), "; one collective takes tensors of one device");
    TORCH_CHECK(device.is_cpu() || device.is_cuda(), "qccl backend: ", what, ": tensor on ", device,
                "; qccl takes CPU and CUDA tensors");
    TORCH_CHECK(!t.is_sparse(), "qccl backend: ", what, ": sparse tensors are not supported");
    qcclTypeOf(t);
  }
  return device;
}

c10::Device checkTensors(const std::vector<at::Tensor>& first,
                         const std::vector<at::Tensor>& second, const char* what) {
  std::vector<at::Tensor> all(first);
  all.insert(all.end(), second.begin(), second.end());
  return checkTensors(all, what);
}

}  // namespace qccl::torch_backend
