#include "codecs/topk_layout.h"

namespace qccl::codec {

namespace {
size_t roundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

uint32_t ceilLog2(uint32_t v) {
  uint32_t bits = 0;
  while ((uint32_t(1) << bits) < v) ++bits;
  return bits;
}
}  // namespace

uint32_t topkKeep(uint32_t densityPpm, uint32_t length) {
  return uint32_t((uint64_t(densityPpm) * length + kPpm - 1) / kPpm);
}

TopkIndexField topkIndexField(uint32_t keep, uint32_t length, uint32_t positionBits) {
  TopkIndexField f;
  const size_t list = size_t(keep) * positionBits;
  f.bitmap = list >= length;
  f.bits = f.bitmap ? length : list;
  f.bytes = (f.bits + 7) / 8;
  return f;
}

TopkLayout topkLayout(const CodecSpec& spec, size_t count) {
  TopkLayout l{};
  l.count = count;
  l.block = spec.block;
  l.blocks = (count + spec.block - 1) / spec.block;
  l.positionBits = ceilLog2(spec.block);
  l.keep = topkKeep(spec.densityPpm, spec.block);
  l.field = topkIndexField(l.keep, spec.block, l.positionBits);
  if (l.blocks > 0) {
    const uint32_t lastLength = uint32_t(count - (l.blocks - 1) * spec.block);
    l.lastKeep = topkKeep(spec.densityPpm, lastLength);
    l.lastField = topkIndexField(l.lastKeep, lastLength, l.positionBits);
  }
  l.flagsOffset = kChunkHeaderBytes;
  l.flagsBytes = roundUp((l.blocks + 7) / 8, kSectionAlign);
  l.indexOffset = l.flagsOffset + l.flagsBytes;
  if (l.blocks > 0) {
    const TopkBlock last = topkBlock(l, l.blocks - 1);
    l.values = last.firstValue + last.keep;
    l.indexBytes = roundUp(last.fieldOffset + last.field.bytes, kSectionAlign);
  }
  const ChunkLayout v = chunkLayout(topkValueSpec(spec), l.values, qcclFloat32);
  l.valueSections = v;
  l.valueSections.scalesOffset = l.indexOffset + l.indexBytes;
  l.valueSections.elementsOffset = l.valueSections.scalesOffset + v.scalesBytes;
  l.totalBytes = l.valueSections.elementsOffset + v.elementsBytes;
  l.valueSections.totalBytes = l.totalBytes;
  return l;
}

TopkBlock topkBlock(const TopkLayout& layout, size_t b) {
  TopkBlock t;
  const bool last = b + 1 == layout.blocks;
  t.length = last ? uint32_t(layout.count - b * layout.block) : layout.block;
  t.keep = last ? layout.lastKeep : layout.keep;
  t.field = last ? layout.lastField : layout.field;
  t.fieldOffset = b * layout.field.bytes;
  t.firstValue = b * layout.keep;
  return t;
}

}  // namespace qccl::codec
