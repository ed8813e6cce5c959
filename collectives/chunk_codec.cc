#include "collectives/chunk_codec.h"

#include <numeric>

#include "codecs/codec.h"

namespace qccl::coll {

size_t chunkBytes(const Context& context, size_t count, qcclDataType_t dtype) {
  return codec::encodedSize(context.codec, count, dtype);
}

size_t chunkUnit(const Context& context) { return chunkUnit(context.codec); }

size_t chunkUnit(const codec::CodecSpec& codec) {
  return std::lcm(size_t(codec.block ? codec.block : 1), size_t(codec.rhtSize ? codec.rhtSize : 1));
}

CodecCall codecCall(const Context& context) {
  return {context.codec, context.seed, uint32_t(context.globalRank()), context.efDecay};
}

EncodeTask encodeTask(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                      const EncodeRole& role, size_t offset, uint8_t* out, size_t outBytes) {
  EncodeTask task{};
  task.input = data;
  task.inputType = dtype;
  task.count = count;
  // Worker and server encodes of one call draw from two streams.
  task.call = uint32_t(context.sequence * 2 + (role.slot == Residuals::kServer ? 1 : 0));
  task.offset = offset;
  task.out = out;
  task.outBytes = outBytes;
  task.residualType = qcclFloat32;
  if (context.residuals) {
    uint8_t* base = static_cast<uint8_t*>(context.residuals->get(role.slot, role.slotCount));
    task.residualType = context.residuals->dtype();
    task.residual = base + role.slotOffset * (task.residualType == qcclFloat32 ? 4 : 2);
  }
  return task;
}

void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, uint8_t* out, size_t outBytes) {
  const EncodeTask task = encodeTask(context, data, count, dtype, role, offset, out, outBytes);
  context.executor->encode(codecCall(context), &task, 1);
}

void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, Buffer& out) {
  out.resize(chunkBytes(context, count, dtype));
  encodeChunk(context, data, count, dtype, role, offset, out.data(), out.size());
}

bool acceptChunk(Context& context, const uint8_t* chunk, size_t bytes, size_t count, int from) {
  return context.executor->accept(context, chunk, bytes, count, from);
}

void decodeChunk(Context& context, const uint8_t* chunk, size_t bytes, size_t count,
                 qcclDataType_t sourceType, qcclDataType_t dtype, void* out, bool accumulate) {
  const DecodeTask task{chunk, bytes, count, sourceType, out, dtype, accumulate};
  context.executor->decode(codecCall(context), &task, 1);
}

}  // namespace qccl::coll
