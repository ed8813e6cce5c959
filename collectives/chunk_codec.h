// Encoding and decoding of the chunks the compressed collectives send, with the call's stream of
// stochastic-rounding bits and its error-feedback residual.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/context.h"
#include "collectives/partition.h"

namespace qccl::coll {

// Residual slot and the SR stream (call) an encode belongs to.
struct EncodeRole {
  Residuals::Slot slot;
  size_t slotCount;   // elements of the slot's residual (the call's whole input for kWorker)
  size_t slotOffset;  // where this chunk's residual starts in the slot
};

size_t chunkBytes(const Context& context, size_t count, qcclDataType_t dtype);

// Encodes count elements into the outBytes (= chunkBytes) at out. offset: the chunk's first
// element in the call's vector (keys the SR stream).
void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, uint8_t* out, size_t outBytes);
// The same into a buffer sized to fit.
void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, Buffer& out);

// True when a received chunk is what this rank expects; a poison message or a chunk that does
// not match is recorded in the context instead.
bool acceptChunk(Context& context, const uint8_t* chunk, size_t bytes, size_t count, int from);

// Decodes an accepted chunk into `out` (dtype), or adds it into fp32 `out` (accumulate).
void decodeChunk(const Context& context, const uint8_t* chunk, size_t bytes, size_t count,
                 qcclDataType_t dtype, void* out, bool accumulate);

// Block alignment for partitions: codec blocks and +rht runs stay whole.
size_t chunkUnit(const Context& context);

}  // namespace qccl::coll
