// The encode and decode of a dense format's two sections (block scales, then packed elements)
// through a CPU kernel table: a whole chunk of a dense codec, or the values of a topk chunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/chunk_layout.h"
#include "codecs/codec.h"
#include "codecs/codec_spec.h"
#include "codecs/cpu/kernels.h"

namespace qccl::codec {

// Encodes layout.count values into the sections at chunk + layout's offsets (their padding
// zeroed, so equal inputs give equal bytes). Returns the chunk scale for the header.
float encodeSections(const CodecSpec& spec, const ChunkLayout& layout, const void* input,
                     qcclDataType_t dtype, uint8_t* chunk, const EncodeParams& params,
                     const KernelTable& kernels);

// Decodes the sections into output (outputType), or adds them into fp32 output (accumulate).
void decodeSections(const CodecSpec& spec, const ChunkLayout& layout, qcclDataType_t sourceType,
                    const uint8_t* chunk, float chunkScale, uint64_t seed, void* output,
                    qcclDataType_t outputType, bool accumulate, const KernelTable& kernels);

}  // namespace qccl::codec
