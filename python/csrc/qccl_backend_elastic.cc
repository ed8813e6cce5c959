// The qccl backend's elastic membership: shrinking to the survivors of a lost peer and growing to
// admit new processes, each giving a new backend over the new communicator
// (docs/INTEGRATION.md, "Elastic training").
#include <cstring>

#include "qccl_backend.h"

namespace qccl::torch_backend {

namespace {

qcclUniqueId idFromBytes(const std::vector<uint8_t>& bytes) {
  qcclUniqueId id;
  TORCH_CHECK(bytes.size() == sizeof id.internal, "qccl backend: a grow id is ", sizeof id.internal,
              " bytes, not ", bytes.size());
  std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  return id;
}

}  // namespace

c10::intrusive_ptr<QcclBackend> QcclBackend::shrink(const std::vector<int>& exclude) {
  qcclComm_t child = nullptr;
  runInOrder([&] {
    // QCCL_SHRINK_ABORT cancels the messages still pending: their Works fail (the completer's
    // next qcclTest finds them gone).
    std::vector<int> list(exclude);
    check(qcclCommShrink(comm_, list.data(), int(list.size()), &child, nullptr, QCCL_SHRINK_ABORT),
          "qcclCommShrink");
  });
  return c10::make_intrusive<QcclBackend>(child, timeout_);
}

std::vector<uint8_t> QcclBackend::growUniqueId() {
  qcclUniqueId id;
  runInOrder([&] { check(qcclCommGetUniqueId(comm_, &id), "qcclCommGetUniqueId"); });
  return std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal);
}

c10::intrusive_ptr<QcclBackend> QcclBackend::grow(int size,
                                                  const std::optional<std::vector<uint8_t>>& id) {
  qcclComm_t child = nullptr;
  runInOrder([&] {
    const std::optional<qcclUniqueId> given =
        id ? std::optional<qcclUniqueId>(idFromBytes(*id)) : std::nullopt;
    check(qcclCommGrow(comm_, size, given ? &*given : nullptr, -1, &child, nullptr),
          "qcclCommGrow");
  });
  return c10::make_intrusive<QcclBackend>(child, timeout_);
}

c10::intrusive_ptr<QcclBackend> QcclBackend::join(int size, const std::vector<uint8_t>& id,
                                                  int rank, std::chrono::milliseconds timeout,
                                                  const BackendOptions& options) {
  const qcclUniqueId given = idFromBytes(id);
  qcclConfig_t config = configOf(options, timeout);
  qcclComm_t comm = nullptr;
  check(qcclCommGrow(nullptr, size, &given, rank, &comm, &config), "qcclCommGrow");
  return c10::make_intrusive<QcclBackend>(comm, timeout.count() > 0 ? timeout : kDefaultTimeout);
}

}  // namespace qccl::torch_backend
