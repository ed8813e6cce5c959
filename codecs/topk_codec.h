// Top-k sparsification (docs/CODECS.md, "Top-k"): per block, the positions of the largest
// magnitudes (ties: the lower index) and their values in a dense value format. The selection
// runs on the host; the values go through the dense formats' CPU kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codecs/chunk_header.h"
#include "codecs/codec.h"
#include "codecs/codec_spec.h"
#include "codecs/cpu/kernels.h"

namespace qccl::codec {

// The working memory of one block's selection.
struct TopkScratch {
  std::vector<uint16_t> indices;     // gathered: those that may be among the largest
  std::vector<uint32_t> candidates;  // their keys (|p| bits)
  std::vector<uint32_t> keys;        // a sample, then a copy of candidates to order
};

// Writes to positions, ascending, the indices of the keep elements of p[0, length) with the
// largest |p|, a tie going to the lower index. Returns false, writing nothing, when the block
// holds a NaN or an infinity.
bool selectTopk(const float* p, uint32_t length, uint32_t keep, TopkScratch& scratch,
                uint16_t* positions);

// Encodes count elements (input of dtype, plus params.residual) into the chunk's flags, index and
// value sections; the header is the caller's. Returns the value format's chunk scale.
float encodeTopk(const CodecSpec& spec, const void* input, size_t count, qcclDataType_t dtype,
                 uint8_t* chunk, const EncodeParams& params, const KernelTable& kernels);

// Decodes a checked chunk (header h) into output; accumulate adds into fp32 output. Throws
// CodecError(InvalidUsage), writing nothing, when an index field does not hold exactly its
// block's number of ascending in-block positions.
void decodeTopk(const CodecSpec& spec, const ChunkHeader& h, const uint8_t* chunk, void* output,
                size_t count, qcclDataType_t dtype, bool accumulate, const KernelTable& kernels);

}  // namespace qccl::codec
