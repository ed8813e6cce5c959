#include "collectives/chunk_codec.h"

#include <numeric>

#include "codecs/codec.h"
#include "codecs/codec_error.h"
#include "collectives/messages.h"

namespace qccl::coll {

size_t chunkBytes(const Context& context, size_t count, qcclDataType_t dtype) {
  return codec::encodedSize(context.codec, count, dtype);
}

size_t chunkUnit(const Context& context) {
  return std::lcm(size_t(context.codec.block ? context.codec.block : 1),
                  size_t(context.codec.rhtSize ? context.codec.rhtSize : 1));
}

void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, Buffer& out) {
  out.resize(chunkBytes(context, count, dtype));
  encodeChunk(context, data, count, dtype, role, offset, out.data(), out.size());
}

void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, uint8_t* out, size_t outBytes) {
  codec::EncodeParams params;
  params.seed = context.seed;
  params.rank = uint32_t(context.globalRank());
  params.call = uint32_t(context.sequence * 2 + (role.slot == Residuals::kServer ? 1 : 0));
  params.offset = offset;
  if (context.residuals) {
    uint8_t* base = static_cast<uint8_t*>(context.residuals->get(role.slot, role.slotCount));
    params.residual = base + role.slotOffset * (context.residuals->dtype() == qcclFloat32 ? 4 : 2);
    params.residualType = context.residuals->dtype();
  }
  codec::encode(context.codec, data, count, dtype, out, outBytes, params);
}

bool acceptChunk(Context& context, const uint8_t* chunk, size_t bytes, size_t count, int from) {
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

void decodeChunk(const Context& context, const uint8_t* chunk, size_t bytes, size_t count,
                 qcclDataType_t dtype, void* out, bool accumulate) {
  codec::decode(context.codec, chunk, bytes, out, count, dtype, accumulate);
}

}  // namespace qccl::coll
