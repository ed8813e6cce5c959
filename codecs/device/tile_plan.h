// The host side of a device codec launch: where each chunk's sections lie and how it is cut into
// tiles, and the batches (tile_batch.h) that carry them to the kernels, at most kMaxBatchChunks
// chunks each. Used by the CUDA launch layer (codecs/cuda/codec_kernels.cu) and by the tests that
// run the same batches through the tile bodies on the CPU.
#pragma once

#include <vector>

#include "codecs/chunk_layout.h"
#include "codecs/codec_error.h"
#include "codecs/codec_spec.h"
#include "codecs/cpu/kernels.h"
#include "codecs/device/tile_batch.h"

namespace qccl {
inline namespace QCCL_ISA {
namespace tile {

// Elements per tile: the CPU kernels' tile (whole blocks and +rht runs, at least 2048). Throws
// CodecError(InvalidArgument) when lcm(block, R) makes it larger than the device kernels take.
inline uint32_t tileElementsFor(const codec::CodecSpec& spec) {
  const size_t t = codec::tileElements(spec);
  if (t > kMaxTileElements) {
    codec::throwCodecError(codec::ErrorKind::InvalidArgument,
                           "codec %s: a block of %u and +rht runs of %u make tiles of %zu "
                           "elements; the device kernels take at most %zu",
                           codec::codecName(spec).c_str(), unsigned(spec.block),
                           unsigned(spec.rhtSize), t, kMaxTileElements);
  }
  return uint32_t(t);
}

// Places a chunk of count elements of dtype at tile firstTile of a launch.
inline ChunkPlace placeChunk(const codec::CodecSpec& spec, size_t count, qcclDataType_t dtype,
                             uint32_t tileElements, uint64_t firstTile) {
  const codec::ChunkLayout l = codec::chunkLayout(spec, count, dtype);
  ChunkPlace p;
  p.count = count;
  p.paddedCount = l.paddedCount;
  p.blocks = l.blocks;
  p.scalesBytes = l.scalesBytes;
  p.elementsOffset = l.elementsOffset;
  p.elementsBytes = l.elementsBytes;
  p.firstTile = firstTile;
  const uint64_t tiles = (l.paddedCount + tileElements - 1) / tileElements;
  p.tiles = tiles ? tiles : 1;
  return p;
}

// Splits chunks (each with place.count set) into batches like `prototype`, placing each chunk's
// tiles after the previous one's: dtypeOf(chunk) is the dtype its count is of (the encoder's
// input). fn(batch, tiles) receives each batch and its tile count.
template <class Batch, class Chunk, class DtypeOf, class Fn>
void forEachBatch(const Batch& prototype, const std::vector<Chunk>& chunks, DtypeOf dtypeOf,
                  Fn&& fn) {
  for (size_t first = 0; first < chunks.size(); first += kMaxBatchChunks) {
    Batch b = prototype;
    b.chunkCount = 0;
    uint64_t tiles = 0;
    for (size_t c = first; c < chunks.size() && c < first + kMaxBatchChunks; ++c) {
      Chunk& placed = b.chunk[b.chunkCount++];
      placed = chunks[c];
      placed.place =
          placeChunk(b.spec, chunks[c].place.count, dtypeOf(chunks[c]), b.tileElements, tiles);
      tiles += placed.place.tiles;
    }
    fn(b, tiles);
  }
}

}  // namespace tile
}  // namespace QCCL_ISA
}  // namespace qccl
