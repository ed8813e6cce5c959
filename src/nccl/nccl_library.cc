#include "src/nccl/nccl_library.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "src/common/error.h"
#include "src/common/log.h"
#include "src/common/params.h"

namespace qccl::nccl {

namespace {

template <class F>
void bind(void* handle, const std::string& path, const char* symbol, F*& slot) {
  slot = reinterpret_cast<F*>(dlsym(handle, symbol));
  if (slot == nullptr) {
    throwError(qcclInvalidUsage, "%s has no %s: not an NCCL library this qccl can use",
               path.c_str(), symbol);
  }
}

std::mutex loadMutex;
std::string defaultPath = "libnccl.so.2";

Library load() {
  Library lib;
  const std::string wanted = paramString(params::kNcclLib);
  lib.path = wanted.empty() ? defaultPath : wanted;
  void* handle = dlopen(lib.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throwError(qcclInvalidUsage, "cannot load NCCL (%s): %s; set QCCL_NCCL_LIB to its path",
               lib.path.c_str(), why ? why : "unknown error");
  }
  bind(handle, lib.path, "ncclGetVersion", lib.getVersion);
  bind(handle, lib.path, "ncclGetUniqueId", lib.getUniqueId);
  bind(handle, lib.path, "ncclCommInitRank", lib.commInitRank);
  bind(handle, lib.path, "ncclCommDestroy", lib.commDestroy);
  bind(handle, lib.path, "ncclCommAbort", lib.commAbort);
  bind(handle, lib.path, "ncclCommCount", lib.commCount);
  bind(handle, lib.path, "ncclCommUserRank", lib.commUserRank);
  bind(handle, lib.path, "ncclCommGetAsyncError", lib.commGetAsyncError);
  bind(handle, lib.path, "ncclGetErrorString", lib.getErrorString);
  bind(handle, lib.path, "ncclGetLastError", lib.getLastError);
  bind(handle, lib.path, "ncclSend", lib.send);
  bind(handle, lib.path, "ncclRecv", lib.recv);
  bind(handle, lib.path, "ncclGroupStart", lib.groupStart);
  bind(handle, lib.path, "ncclGroupEnd", lib.groupEnd);
  bind(handle, lib.path, "ncclAllReduce", lib.allReduce);
  bind(handle, lib.path, "ncclReduceScatter", lib.reduceScatter);
  bind(handle, lib.path, "ncclAllGather", lib.allGather);
  bind(handle, lib.path, "ncclBroadcast", lib.broadcast);
  lib.takesHostMemory = dlsym(handle, "qcclStandinNcclTakesHostMemory") != nullptr;
  check(lib.getVersion(&lib.version), "ncclGetVersion");
  QCCL_INFO(kLogInit, "NCCL %d from %s%s", lib.version, lib.path.c_str(),
            lib.takesHostMemory ? " (a stand-in that takes host memory)" : "");
  return lib;  // the handle stays open for the life of the process
}

std::atomic<const Library*> loaded{nullptr};

}  // namespace

void setDefaultLibrary(const std::string& path) {
  std::lock_guard<std::mutex> lock(loadMutex);
  defaultPath = path;
}

const Library& library() {
  std::lock_guard<std::mutex> lock(loadMutex);
  if (loaded.load() == nullptr) loaded.store(new Library(load()));  // a failed load: next time
  return *loaded.load();
}

void check(Result result, const char* what, Comm comm) {
  if (result == kSuccess) return;
  const Library* lib = loaded.load();
  const char* text = lib ? lib->getErrorString(result) : "";
  const char* last = lib ? lib->getLastError(comm) : "";
  const qcclResult_t code =
      result > 0 && result < int(qcclTimeout) ? qcclResult_t(result) : qcclInternalError;
  throwError(code, "nccl: %s failed: %s%s%s", what, text ? text : "", last && *last ? ": " : "",
             last ? last : "");
}

}  // namespace qccl::nccl
