// Where each section of an encoded chunk lies (docs/CODECS.md, "Wire chunk"): a 64-byte header,
// the block scales, then the packed elements, each section a multiple of 16 bytes.
#pragma once

#include <cstddef>

#include "codecs/chunk_header.h"
#include "codecs/codec_spec.h"
#include "qccl/qccl.h"

namespace qccl::codec {

constexpr size_t kSectionAlign = 16;
// Larger counts are refused before any size arithmetic could overflow (2^56 elements).
constexpr size_t kMaxCount = size_t(1) << 56;

struct ChunkLayout {
  size_t count;         // elements the caller encodes
  size_t paddedCount;   // count rounded up to whole +rht runs (zeros fill the gap)
  size_t blocks;        // block scales
  size_t scalesOffset;  // == kChunkHeaderBytes
  size_t scalesBytes;
  size_t elementsOffset;
  size_t elementsBytes;
  size_t totalBytes;
};

// True for the dtypes the codecs read and write: fp32, bf16, fp16.
// An int, so that a byte read off the wire is checked before it becomes a qcclDataType_t.
bool isCodecDataType(int dtype);
size_t dataTypeBytes(qcclDataType_t dtype);

// Throws CodecError(InvalidArgument) for an unsupported dtype or an absurd count. A topk chunk's
// sections are topkLayout's (codecs/topk_layout.h); here its payload counts as elements.
ChunkLayout chunkLayout(const CodecSpec& spec, size_t count, qcclDataType_t dtype);

}  // namespace qccl::codec
