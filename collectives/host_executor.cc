#include "collectives/host_executor.h"

#include <cstring>
#include <string>

#include "codecs/codec.h"
#include "codecs/codec_error.h"
#include "collectives/context.h"
#include "collectives/messages.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void HostExecutor::copy(void* dst, const void* src, size_t bytes) {
  if (bytes && dst != src) std::memmove(dst, src, bytes);
}

void HostExecutor::zero(void* dst, size_t bytes) {
  if (bytes) std::memset(dst, 0, bytes);
}

void HostExecutor::toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out) {
  coll::toFloat32(in, dtype, count, out);
}

void HostExecutor::addToFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc) {
  if (dtype == qcclFloat32) {
    const float* __restrict x = static_cast<const float*>(in);
    for (size_t i = 0; i < count; ++i) acc[i] += x[i];
  } else {
    addAsFloat32(in, dtype, count, acc);
  }
}

void HostExecutor::divide(float* values, size_t count, float divisor) {
  for (size_t i = 0; i < count; ++i) values[i] /= divisor;
}

void HostExecutor::fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out) {
  coll::fromFloat32(in, count, dtype, out);
}

void HostExecutor::encode(const CodecCall& codec, const EncodeTask* tasks, size_t count) {
  for (size_t t = 0; t < count; ++t) {
    const EncodeTask& task = tasks[t];
    codec::EncodeParams params;
    params.seed = codec.seed;
    params.rank = codec.rank;
    params.call = task.call;
    params.offset = task.offset;
    params.residual = task.residual;
    params.residualType = task.residualType;
    params.residualDecay = codec.residualDecay;
    codec::encode(codec.spec, task.input, task.count, task.inputType, task.out, task.outBytes,
                  params);
  }
}

bool HostExecutor::accept(Context& context, const uint8_t* chunk, size_t bytes, size_t count,
                          int from) {
  const int poisoner = poisonSender(chunk, bytes);
  if (poisoner >= 0) {
    recordPoison(context, poisoner);
    return false;
  }
  try {
    codec::validateChunk(context.codec, chunk, bytes, count);
    return true;
  } catch (const codec::CodecError& e) {
    context.recordUsageError("from rank " + std::to_string(context.group.ranks[size_t(from)]) +
                             ": " + e.what());
    return false;
  }
}

void HostExecutor::decode(const CodecCall& codec, const DecodeTask* tasks, size_t count) {
  for (size_t t = 0; t < count; ++t) {
    const DecodeTask& task = tasks[t];
    codec::decode(codec.spec, task.chunk, task.bytes, task.out, task.count, task.outType,
                  task.accumulate);
  }
}

HostExecutor& hostExecutor() {
  static HostExecutor executor;
  return executor;
}

}  // namespace qccl::coll
