// qccl.torch._C: makes the `qccl` backend for a process group (called by qccl/torch/__init__.py,
// which registers it with torch.distributed).
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "qccl_backend.h"

namespace py = pybind11;
using qccl::torch_backend::BackendOptions;
using qccl::torch_backend::CallSettings;
using qccl::torch_backend::MaskExchangeHandle;
using qccl::torch_backend::QcclBackend;

namespace {

// The qccl backend behind a process group's backend object (pg._get_backend(device)).
QcclBackend& qcclBackend(const c10::intrusive_ptr<c10d::Backend>& backend) {
  auto* q = dynamic_cast<QcclBackend*>(backend.get());
  TORCH_CHECK(q != nullptr, "not a qccl process group: its backend is '",
              backend ? backend->getBackendName() : std::string("none"), "'");
  return *q;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "qccl's torch.distributed backend (C++)";
  m.def(
      "create_backend",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
         std::chrono::milliseconds timeout, std::optional<std::string> codec,
         std::optional<std::string> transport, std::optional<std::string> algorithm,
         std::optional<size_t> minBytes, std::optional<bool> errorFeedback,
         std::optional<std::string> efDtype,
         std::optional<float> efDecay) -> c10::intrusive_ptr<c10d::Backend> {
        const BackendOptions options{codec,         transport, algorithm, minBytes,
                                     errorFeedback, efDtype,   efDecay};
        return c10::make_intrusive<QcclBackend>(store, rank, size, timeout, options);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
      py::arg("codec") = py::none(), py::arg("transport") = py::none(),
      py::arg("algorithm") = py::none(), py::arg("min_bytes") = py::none(),
      py::arg("error_feedback") = py::none(), py::arg("ef_dtype") = py::none(),
      py::arg("ef_decay") = py::none(), py::call_guard<py::gil_scoped_release>());
  // The collectives with per-call settings (qcclCallConfig_t): key, then keyword-only codec,
  // ef_decay, exact and error_feedback; what is None is the group's.
  m.def(
      "all_reduce",
      [](const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor tensor, c10d::ReduceOp op,
         uint64_t key, std::optional<std::string> codec, std::optional<float> efDecay, bool exact,
         bool errorFeedback, bool anySize) {
        return qcclBackend(b).allreduceWith(
            tensor, op, CallSettings{key, codec, efDecay, exact, errorFeedback, anySize});
      },
      py::arg("backend"), py::arg("tensor"), py::arg("op"), py::arg("key"), py::kw_only(),
      py::arg("codec") = py::none(), py::arg("ef_decay") = py::none(), py::arg("exact") = false,
      py::arg("error_feedback") = true, py::arg("any_size") = false);
  m.def(
      "reduce_scatter",
      [](const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor output, at::Tensor input,
         c10d::ReduceOp op, uint64_t key, std::optional<std::string> codec,
         std::optional<float> efDecay, bool exact, bool errorFeedback) {
        return qcclBackend(b).reduceScatterWith(
            output, input, op, CallSettings{key, codec, efDecay, exact, errorFeedback});
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("op"), py::arg("key"),
      py::kw_only(), py::arg("codec") = py::none(), py::arg("ef_decay") = py::none(),
      py::arg("exact") = false, py::arg("error_feedback") = true);
  m.def(
      "all_gather",
      [](const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor output, at::Tensor input,
         uint64_t key, bool exact, std::optional<std::string> codec, std::optional<float> efDecay,
         bool errorFeedback) {
        return qcclBackend(b).allGatherWith(
            output, input, CallSettings{key, codec, efDecay, exact, errorFeedback});
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("key"),
      py::arg("exact") = false, py::kw_only(), py::arg("codec") = py::none(),
      py::arg("ef_decay") = py::none(), py::arg("error_feedback") = true);
  m.def(
      "gather_changes",
      [](const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor buffer, uint64_t key,
         std::optional<std::string> codec, bool changes) {
        CallSettings call;
        call.key = key;
        call.codec = codec;
        return qcclBackend(b).gatherChanges(buffer, call, changes);
      },
      py::arg("backend"), py::arg("buffer"), py::arg("key"), py::kw_only(),
      py::arg("codec") = py::none(), py::arg("changes") = true,
      "all_gather_into_tensor into `buffer` sends each rank's change from now on "
      "(QCCL_CALL_DELTA; changes=False: its values, encoded without error feedback); first an "
      "exact all-gather of this rank's shard into it");
  m.def(
      "masked_reduce_scatter",
      [](const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor output, at::Tensor input,
         const at::Tensor& mask, c10d::ReduceOp op, uint64_t key, std::optional<std::string> codec,
         bool errorFeedback) {
        CallSettings call;
        call.key = key;
        call.codec = codec;
        call.errorFeedback = errorFeedback;
        return qcclBackend(b).maskedReduceScatter(output, input, mask, op, call);
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("mask"), py::arg("op"),
      py::arg("key"), py::kw_only(), py::arg("codec") = py::none(),
      py::arg("error_feedback") = true,
      "qcclMaskedReduceScatter: the values under `mask` (a uint8 bitmap over the input) only");
  m.def(
      "masked_all_gather",
      [](const c10::intrusive_ptr<c10d::Backend>& b, at::Tensor output, at::Tensor input,
         const at::Tensor& mask, uint64_t key, std::optional<std::string> codec,
         bool errorFeedback) {
        CallSettings call;
        call.key = key;
        call.codec = codec;
        call.errorFeedback = errorFeedback;
        return qcclBackend(b).maskedAllGather(output, input, mask, call);
      },
      py::arg("backend"), py::arg("output"), py::arg("input"), py::arg("mask"), py::arg("key"),
      py::kw_only(), py::arg("codec") = py::none(), py::arg("error_feedback") = true,
      "qcclMaskedAllGather: the values under `mask` (a uint8 bitmap over the output) only");
  py::class_<MaskExchangeHandle, std::shared_ptr<MaskExchangeHandle>>(m, "MaskExchange")
      .def("test", &MaskExchangeHandle::test, py::call_guard<py::gil_scoped_release>())
      .def("wait", &MaskExchangeHandle::wait, py::call_guard<py::gil_scoped_release>());
  m.def(
      "start_mask_exchange",
      [](const c10::intrusive_ptr<c10d::Backend>& b, const at::Tensor& shardMask,
         const at::Tensor& mask, size_t shard,
         unsigned tag) { return qcclBackend(b).startMaskExchange(shardMask, mask, shard, tag); },
      py::arg("backend"), py::arg("shard_mask"), py::arg("mask"), py::arg("shard"), py::arg("tag"),
      "qcclMaskExchangeStart: this rank's shard mask to every rank into `mask`, in the "
      "background; the MaskExchange's test() / wait() complete it");
  m.def(
      "changes_sent_bytes",
      [](const c10::intrusive_ptr<c10d::Backend>& b) { return qcclBackend(b).changesSentBytes(); },
      py::arg("backend"), py::call_guard<py::gil_scoped_release>(),
      "the bytes this rank's all-gathers into buffers registered by gather_changes have sent");
  m.def(
      "wire_bytes",
      [](const c10::intrusive_ptr<c10d::Backend>& b) {
        py::gil_scoped_release release;
        return qcclBackend(b).wireBytes();
      },
      py::arg("backend"),
      "(sent, received): the bytes this rank's collectives on the group have moved "
      "(qcclCommWireBytes)");
  m.def(
      "ef_state",
      [](const c10::intrusive_ptr<c10d::Backend>& b) {
        std::vector<uint8_t> state;
        {
          py::gil_scoped_release release;
          state = qcclBackend(b).efState();
        }
        return py::bytes(reinterpret_cast<const char*>(state.data()), state.size());
      },
      py::arg("backend"));
  m.def(
      "load_ef_state",
      [](const c10::intrusive_ptr<c10d::Backend>& b, const std::string& state) {
        const std::vector<uint8_t> bytes(state.begin(), state.end());
        py::gil_scoped_release release;
        qcclBackend(b).loadEfState(bytes);
      },
      py::arg("backend"), py::arg("state"));
  m.def(
      "reset_ef",
      [](const c10::intrusive_ptr<c10d::Backend>& b, uint64_t key) { qcclBackend(b).resetEf(key); },
      py::arg("backend"), py::arg("key"), py::call_guard<py::gil_scoped_release>(),
      "drops this rank's residuals of one key (0: every key), qcclEfReset");
  // Elastic membership (qccl/torch/elastic.py): each returns the backend of the new communicator.
  m.def(
      "shrink",
      [](const c10::intrusive_ptr<c10d::Backend>& b, const std::vector<int>& exclude)
          -> c10::intrusive_ptr<c10d::Backend> { return qcclBackend(b).shrink(exclude); },
      py::arg("backend"), py::arg("exclude"), py::call_guard<py::gil_scoped_release>());
  m.def(
      "grow_unique_id",
      [](const c10::intrusive_ptr<c10d::Backend>& b) {
        std::vector<uint8_t> id;
        {
          py::gil_scoped_release release;
          id = qcclBackend(b).growUniqueId();
        }
        return py::bytes(reinterpret_cast<const char*>(id.data()), id.size());
      },
      py::arg("backend"));
  m.def(
      "grow",
      [](const c10::intrusive_ptr<c10d::Backend>& b, int size,
         std::optional<std::string> id) -> c10::intrusive_ptr<c10d::Backend> {
        std::optional<std::vector<uint8_t>> bytes;
        if (id) bytes.emplace(id->begin(), id->end());
        py::gil_scoped_release release;
        return qcclBackend(b).grow(size, bytes);
      },
      py::arg("backend"), py::arg("size"), py::arg("id") = py::none());
  m.def(
      "join",
      [](int size, const std::string& id, int rank, std::chrono::milliseconds timeout,
         std::optional<std::string> codec, std::optional<std::string> transport,
         std::optional<std::string> algorithm, std::optional<size_t> minBytes,
         std::optional<bool> errorFeedback, std::optional<std::string> efDtype,
         std::optional<float> efDecay) -> c10::intrusive_ptr<c10d::Backend> {
        const BackendOptions options{codec,         transport, algorithm, minBytes,
                                     errorFeedback, efDtype,   efDecay};
        const std::vector<uint8_t> bytes(id.begin(), id.end());
        py::gil_scoped_release release;
        return QcclBackend::join(size, bytes, rank, timeout, options);
      },
      py::arg("size"), py::arg("id"), py::arg("rank"), py::arg("timeout"),
      py::arg("codec") = py::none(), py::arg("transport") = py::none(),
      py::arg("algorithm") = py::none(), py::arg("min_bytes") = py::none(),
      py::arg("error_feedback") = py::none(), py::arg("ef_dtype") = py::none(),
      py::arg("ef_decay") = py::none());
  m.def("version", [] {
    int v = 0;
    qcclGetVersion(&v);
    return v;
  });
}
