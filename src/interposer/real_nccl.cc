#include "src/interposer/real_nccl.h"

#include <dlfcn.h>

#include <mutex>

#include "src/common/error.h"
#include "src/common/log.h"
#include "src/common/params.h"
#include "src/nccl/nccl_library.h"

namespace qccl::interposer {

namespace {

// A handle to search: the named library, or RTLD_NEXT (the definitions after this one).
void* openReal(std::string* path) {
  const std::string wanted = paramString(params::kNcclLib);
  if (!wanted.empty()) {
    void* handle = dlopen(wanted.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      throwError(qcclInvalidUsage, "QCCL_NCCL_LIB=%s cannot be loaded: %s", wanted.c_str(),
                 why ? why : "unknown error");
    }
    *path = wanted;
    return handle;
  }
  void* next = dlsym(RTLD_NEXT, "ncclAllReduce");
  Dl_info info{};
  if (next != nullptr && dladdr(next, &info) != 0 && info.dli_fname != nullptr) {
    *path = info.dli_fname;
    return RTLD_NEXT;
  }
  // The application links no NCCL (it may dlopen one later): the one the loader finds.
  void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throwError(qcclInvalidUsage,
               "libqccl_nccl.so found no NCCL to forward to: none is linked after it and "
               "libnccl.so.2 cannot be loaded; set QCCL_NCCL_LIB to its path");
  }
  *path = "libnccl.so.2";
  return handle;
}

template <class F>
void bind(void* handle, const std::string& path, const char* symbol, F*& slot) {
  slot = reinterpret_cast<F*>(dlsym(handle, symbol));
  if (slot == nullptr) {
    throwError(qcclInvalidUsage, "%s has no %s: not an NCCL library", path.c_str(), symbol);
  }
  // The interposer's own definition (QCCL_NCCL_LIB names libqccl_nccl.so): forwarding to it
  // would call itself forever.
  Dl_info mine{}, found{};
  if (dladdr(reinterpret_cast<void*>(&realNccl), &mine) != 0 &&
      dladdr(reinterpret_cast<void*>(slot), &found) != 0 && mine.dli_fbase == found.dli_fbase) {
    throwError(qcclInvalidUsage, "%s is libqccl_nccl.so itself, not the real NCCL", path.c_str());
  }
}

RealNccl load() {
  RealNccl real;
  void* handle = openReal(&real.path);
  bind(handle, real.path, "ncclAllReduce", real.allReduce);
  bind(handle, real.path, "ncclReduceScatter", real.reduceScatter);
  bind(handle, real.path, "ncclAllGather", real.allGather);
  bind(handle, real.path, "ncclGroupStart", real.groupStart);
  bind(handle, real.path, "ncclGroupEnd", real.groupEnd);
  real.groupSimulateEnd =
      reinterpret_cast<nccl::Result (*)(void*)>(dlsym(handle, "ncclGroupSimulateEnd"));
  bind(handle, real.path, "ncclCommDestroy", real.commDestroy);
  bind(handle, real.path, "ncclCommAbort", real.commAbort);
  bind(handle, real.path, "ncclCommCount", real.commCount);
  bind(handle, real.path, "ncclCommUserRank", real.commUserRank);
  bind(handle, real.path, "ncclCommGetAsyncError", real.commGetAsyncError);
  nccl::setDefaultLibrary(real.path);
  QCCL_INFO(kLogInit, "libqccl_nccl.so: forwarding to %s", real.path.c_str());
  return real;
}

}  // namespace

const RealNccl& realNccl() {
  static std::once_flag once;
  static RealNccl real;
  std::call_once(once, [] { real = load(); });  // a throw leaves it for the next call
  return real;
}

}  // namespace qccl::interposer
