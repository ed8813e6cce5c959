// libFuzzer target: the error-feedback state loader (qcclEfStateLoad) on any bytes, into a
// one-rank communicator. A refused state must leave a message and the communicator's state as it
// was; an accepted one must save to no more bytes than it came in, and that save must load and
// save again unchanged (entries come out in key order, so the first save may reorder them).
#include <qccl/qccl.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

qcclComm_t oneRankComm() {
  static qcclComm_t comm = [] {
    qcclUniqueId id;
    qcclConfig_t config = QCCL_CONFIG_INITIALIZER;
    config.transport = "local";
    qcclComm_t c = nullptr;
    if (qcclGetUniqueId(&id) != qcclSuccess ||
        qcclCommInitRankConfig(&c, 1, id, 0, &config) != qcclSuccess) {
      std::abort();
    }
    return c;
  }();
  return comm;
}

std::vector<uint8_t> saved(qcclComm_t comm) {
  size_t bytes = 0;
  if (qcclEfStateSize(comm, &bytes) != qcclSuccess) std::abort();
  std::vector<uint8_t> state(bytes);
  if (qcclEfStateSave(comm, state.data(), bytes) != qcclSuccess) std::abort();
  return state;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qcclComm_t comm = oneRankComm();
  const std::vector<uint8_t> before = saved(comm);
  if (qcclEfStateLoad(comm, data, size) != qcclSuccess) {
    if (std::strlen(qcclGetLastError(nullptr)) == 0) std::abort();
    if (saved(comm) != before) std::abort();
    return 0;
  }
  const std::vector<uint8_t> after = saved(comm);
  if (after.size() > size) std::abort();
  if (qcclEfStateLoad(comm, after.data(), after.size()) != qcclSuccess) std::abort();
  if (saved(comm) != after) std::abort();
  return 0;
}
