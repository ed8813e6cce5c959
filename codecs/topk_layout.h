// Where the sections of a topk chunk lie and how many values each selection block keeps
// (docs/CODECS.md, "Top-k"): after the 64-byte header, one flag bit per block (set: the block
// held a NaN or infinity), each block's index field (a bitmap or a list of positions, whichever
// is smaller), then the kept values as the value format lays out a vector of them (its scales,
// then its elements). Each section is a multiple of 16 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/chunk_layout.h"
#include "codecs/codec_spec.h"

namespace qccl::codec {

// ceil(densityPpm · length / 10^6): a block of length elements keeps this many.
uint32_t topkKeep(uint32_t densityPpm, uint32_t length);

// How one block's kept positions are written: a list of positionBits-bit positions when that is
// shorter than a bitmap of the block's length, else the bitmap.
struct TopkIndexField {
  bool bitmap;
  size_t bits;  // the field's length in bits; it takes bits / 8 rounded up bytes
  size_t bytes;
};
TopkIndexField topkIndexField(uint32_t keep, uint32_t length, uint32_t positionBits);

struct TopkLayout {
  size_t count;
  uint32_t block;
  size_t blocks;          // the last one holds count - (blocks - 1) · block elements
  uint32_t positionBits;  // ceil(log2 block)
  uint32_t keep;          // of a full block
  TopkIndexField field;   // of a full block
  uint32_t lastKeep;      // the last block's, and its field
  TopkIndexField lastField;
  size_t values;  // kept in all
  size_t flagsOffset, flagsBytes;
  size_t indexOffset, indexBytes;
  ChunkLayout valueSections;  // the value format's sections for `values` elements, offsets in
                              // this chunk (its header fields unused)
  size_t totalBytes;
};

// spec.format must be Format::TopK (validated).
TopkLayout topkLayout(const CodecSpec& spec, size_t count);

// Block b's length, number kept, index field and where that field starts.
struct TopkBlock {
  uint32_t length;
  uint32_t keep;
  TopkIndexField field;
  size_t fieldOffset;  // from the index section's start
  size_t firstValue;   // of the block's kept values, in the value vector
};
TopkBlock topkBlock(const TopkLayout& layout, size_t b);

}  // namespace qccl::codec
