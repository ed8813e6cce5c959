// How torch's tensors and reduce ops map onto qccl's types; what the backend refuses, it refuses
// with a TORCH_CHECK naming the tensor's or op's type.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "qccl/qccl.h"

namespace qccl::torch_backend {

qcclDataType_t qcclTypeOf(const at::Tensor& tensor);
qcclRedOp_t qcclOpOf(const c10d::ReduceOp& op);
// Every tensor is dense, of a type qccl takes, and on one device (the CPU, or one CUDA device);
// returns that device.
c10::Device checkTensors(const std::vector<at::Tensor>& tensors, const char* what);
c10::Device checkTensors(const std::vector<at::Tensor>& first,
                         const std::vector<at::Tensor>& second, const char* what);

}  // namespace qccl::torch_backend
