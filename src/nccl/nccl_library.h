// The NCCL library qccl moves device buffers with: the one QCCL_NCCL_LIB names, else
// libnccl.so.2 as the dynamic loader finds it (the copy the application already loaded, if any),
// or the one the interposer found the application linked.
// Symbols are looked up in that library itself, never in the global scope, so an interposer that
// exports NCCL's names cannot be called back by mistake.
#pragma once

#include <string>

#include "src/nccl/nccl_abi.h"

namespace qccl::nccl {

struct Library {
  std::string path;
  // The library takes host buffers too: only the stand-in NCCL of the test suite does
  // (it exports qcclStandinNcclTakesHostMemory).
  bool takesHostMemory = false;
  int version = 0;  // ncclGetVersion's code

  Result (*getVersion)(int*);
  Result (*getUniqueId)(UniqueId*);
  Result (*commInitRank)(Comm*, int, UniqueId, int);
  Result (*commDestroy)(Comm);
  Result (*commAbort)(Comm);
  Result (*commCount)(Comm, int*);
  Result (*commUserRank)(Comm, int*);
  Result (*commGetAsyncError)(Comm, Result*);
  const char* (*getErrorString)(Result);
  const char* (*getLastError)(Comm);
  Result (*send)(const void*, size_t, DataType, int, Comm, cudaStream_t);
  Result (*recv)(void*, size_t, DataType, int, Comm, cudaStream_t);
  Result (*groupStart)();
  Result (*groupEnd)();
  Result (*allReduce)(const void*, void*, size_t, DataType, RedOp, Comm, cudaStream_t);
  Result (*reduceScatter)(const void*, void*, size_t, DataType, RedOp, Comm, cudaStream_t);
  Result (*allGather)(const void*, void*, size_t, DataType, Comm, cudaStream_t);
  Result (*broadcast)(const void*, void*, size_t, DataType, int, Comm, cudaStream_t);
};

// The library to load when QCCL_NCCL_LIB is unset, instead of libnccl.so.2: the interposer names
// the one the application linked. Takes effect if called before the first library().
void setDefaultLibrary(const std::string& path);

// Loaded on first use and kept. Throws Error(qcclInvalidUsage) saying which library could not be
// loaded or which symbol it lacks.
const Library& library();

// Throws Error for a failed NCCL call: NCCL's code as qcclResult_t, its error string and last
// error, and `what`.
void check(Result result, const char* what, Comm comm = nullptr);

}  // namespace qccl::nccl
