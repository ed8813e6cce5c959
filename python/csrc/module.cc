// qccl.torch._C: makes the `qccl` backend for a process group (called by qccl/torch/__init__.py,
// which registers it with torch.distributed).
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "qccl_backend.h"

namespace py = pybind11;
using qccl::torch_backend::BackendOptions;
using qccl::torch_backend::QcclBackend;

PYBIND11_MODULE(_C, m) {
  m.doc() = "qccl's torch.distributed backend (C++)";
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
         std::chrono::milliseconds timeout, std::optional<std::string> codec,
         std::optional<std::string> transport, std::optional<std::string> algorithm,
         std::optional<size_t> minBytes, std::optional<bool> errorFeedback,
         std::optional<std::string> efDtype) -> c10::intrusive_ptr<c10d::Backend> {
        const BackendOptions options{codec, transport, algorithm, minBytes, errorFeedback, efDtype};
        return c10::make_intrusive<QcclBackend>(store, rank, size, timeout, options);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
      py::arg("codec") = py::none(), py::arg("transport") = py::none(),
      py::arg("algorithm") = py::none(), py::arg("min_bytes") = py::none(),
      py::arg("error_feedback") = py::none(), py::arg("ef_dtype") = py::none(),
      py::call_guard<py::gil_scoped_release>());
  m.def("version", [] {
    int v = 0;
    qcclGetVersion(&v);
    return v;
  });
}
