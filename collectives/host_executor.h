// The CPU executor: the codec library's CPU kernels and plain loops on host memory, run at once.
#pragma once

#include "collectives/executor.h"

namespace qccl::coll {

class HostExecutor : public Executor {
 public:
  Allocator& allocator() override { return hostAllocator(); }
  void copy(void* dst, const void* src, size_t bytes) override;
  void zero(void* dst, size_t bytes) override;
  void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out) override;
  void addToFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc) override;
  void divide(float* values, size_t count, float divisor) override;
  void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out) override;
  void encode(const CodecCall& codec, const EncodeTask* tasks, size_t count) override;
  bool accept(Context& context, const uint8_t* chunk, size_t bytes, size_t count,
              int from) override;
  void decode(const CodecCall& codec, const DecodeTask* tasks, size_t count) override;
  void fence() override {}
  void toHost(void* host, const void* src, size_t bytes) override { copy(host, src, bytes); }
  void fromHost(void* dst, const void* host, size_t bytes) override { copy(dst, host, bytes); }
};

// One per process: it holds no state.
HostExecutor& hostExecutor();

}  // namespace qccl::coll
