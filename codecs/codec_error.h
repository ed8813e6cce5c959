// The one exception type the codec library throws. The public API (src/api) turns it into
// qcclInvalidArgument / qcclInvalidUsage plus the message returned by qcclGetLastError.
#pragma once

#include <stdexcept>
#include <string>

namespace qccl::codec {

enum class ErrorKind {
  InvalidArgument,  // the caller passed something malformed (spec, size, dtype, pointer)
  InvalidUsage,     // well-formed, but not what this call expects (another codec's chunk)
  CudaFailure       // a CUDA call of the device kernels failed
};

class CodecError : public std::runtime_error {
 public:
  CodecError(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void throwCodecError(ErrorKind kind, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace qccl::codec
