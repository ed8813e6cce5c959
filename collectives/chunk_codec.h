// The chunks the compressed collectives send: their size and block alignment, and the encode
// and decode of one chunk through the call's executor, with the call's stochastic-rounding stream
// and error-feedback residual.
#pragma once

#include <cstdint>

#include "collectives/context.h"
#include "collectives/executor.h"

namespace qccl::coll {

// Residual slot and the SR stream (call) an encode belongs to.
struct EncodeRole {
  Residuals::Slot slot;
  size_t slotCount;   // elements of the slot's residual (the call's whole input for kWorker)
  size_t slotOffset;  // where this chunk's residual starts in the slot
};

size_t chunkBytes(const Context& context, size_t count, qcclDataType_t dtype);
// Block alignment for partitions: codec blocks and +rht runs stay whole.
size_t chunkUnit(const Context& context);
size_t chunkUnit(const codec::CodecSpec& codec);

CodecCall codecCall(const Context& context);
// The encode of count elements into the outBytes (= chunkBytes) at out. offset: the chunk's
// first element in the call's vector (keys the SR stream).
EncodeTask encodeTask(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                      const EncodeRole& role, size_t offset, uint8_t* out, size_t outBytes);

// One task each, through the context's executor.
void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, uint8_t* out, size_t outBytes);
// The same into a buffer sized to fit.
void encodeChunk(Context& context, const void* data, size_t count, qcclDataType_t dtype,
                 const EncodeRole& role, size_t offset, Buffer& out);
// Executor::accept: whether a received chunk may be decoded (mismatches are recorded).
bool acceptChunk(Context& context, const uint8_t* chunk, size_t bytes, size_t count, int from);
// Decodes an accepted chunk, encoded from sourceType, into `out` (dtype), or adds it into fp32
// `out` (accumulate).
void decodeChunk(Context& context, const uint8_t* chunk, size_t bytes, size_t count,
                 qcclDataType_t sourceType, qcclDataType_t dtype, void* out, bool accumulate);

}  // namespace qccl::coll
