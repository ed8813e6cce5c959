#include "codecs/chunk_layout.h"

#include "codecs/codec_error.h"
#include "codecs/topk_layout.h"

namespace qccl::codec {

namespace {
size_t roundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
}  // namespace

bool isCodecDataType(int dtype) {
  return dtype == qcclFloat32 || dtype == qcclBfloat16 || dtype == qcclFloat16;
}

size_t dataTypeBytes(qcclDataType_t dtype) { return dtype == qcclFloat32 ? 4 : 2; }

ChunkLayout chunkLayout(const CodecSpec& spec, size_t count, qcclDataType_t dtype) {
  if (!isCodecDataType(dtype)) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec: unsupported dtype %d (codecs take qcclFloat32, qcclBfloat16, "
                    "qcclFloat16)",
                    int(dtype));
  }
  if (count > kMaxCount) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: count %zu exceeds the limit of 2^56",
                    count);
  }
  const FormatInfo& info = formatInfo(spec.format);
  ChunkLayout l{};
  l.count = count;
  if (spec.format == Format::TopK) {  // its sections are topkLayout's: all counted as elements
    const TopkLayout t = topkLayout(spec, count);
    l.paddedCount = count;
    l.blocks = t.blocks;
    l.scalesOffset = l.elementsOffset = kChunkHeaderBytes;
    l.elementsBytes = t.totalBytes - kChunkHeaderBytes;
    l.totalBytes = t.totalBytes;
    return l;
  }
  l.paddedCount = spec.rhtSize ? roundUp(count, spec.rhtSize) : count;
  l.blocks = spec.block ? (l.paddedCount + spec.block - 1) / spec.block : 0;
  l.scalesOffset = kChunkHeaderBytes;
  l.scalesBytes = roundUp(l.blocks * info.scaleBytes, kSectionAlign);
  const size_t bits = info.elementBits ? info.elementBits : 8 * dataTypeBytes(dtype);
  l.elementsOffset = l.scalesOffset + l.scalesBytes;
  l.elementsBytes = roundUp((l.paddedCount * bits + 7) / 8, kSectionAlign);
  l.totalBytes = l.elementsOffset + l.elementsBytes;
  return l;
}

}  // namespace qccl::codec
