// The wire formats (docs/CODECS.md) and the facts about each that the layout, the parser
// and the kernels share.
#pragma once

#include <cstdint>

namespace qccl::codec {

// The numeric values travel in chunk headers: append only.
enum class Format : uint8_t {
  None = 0,
  Bf16 = 1,
  Fp16 = 2,
  Fp8E4M3 = 3,
  Fp8E5M2 = 4,
  MxFp8 = 5,
  MxFp4 = 6,
  NvFp4 = 7,
  Fp4Ue5m3 = 8,
  Int8 = 9,
  Int4 = 10,
  Sign1 = 11,
  Int2 = 12,
  TopK = 13,  // sparse: the selected values travel in another format (codecs/topk_layout.h)
};
constexpr int kFormatCount = 14;

struct FormatInfo {
  const char* name;
  uint8_t elementBits;    // 0: the input dtype's own width (format none)
  uint8_t scaleBytes;     // bytes of one block scale; 0 for element-wise formats
  uint32_t defaultBlock;  // elements per block scale (topk: per selection); 0 for element-wise
  bool blockFixed;        // the block size is part of the format's specification (MX, NVFP4)
  bool allowsStochastic;
};

const FormatInfo& formatInfo(Format format);
bool isBlockScaled(Format format);

}  // namespace qccl::codec
