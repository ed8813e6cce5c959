// What travels besides codec chunks: a 16-byte header in front of exact (uncompressed)
// payloads, so a receiver can tell that its peer sent what it expects, and the "poison" message
// a rank sends in place of data after it found the ranks disagree (docs/ALGORITHMS.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <vector>

#include "collectives/context.h"
#include "collectives/message_kinds.h"
#include "qccl/qccl.h"

namespace qccl::coll {

constexpr size_t kExactHeaderBytes = 16;

// magic "QEXA" | dtype | op | kind | 0 | count (u64)
void writeExactHeader(uint8_t* out, qcclDataType_t dtype, int op, MessageKind kind, size_t count);
// Empty when the header matches, else what differs.
std::string checkExactHeader(const uint8_t* in, qcclDataType_t dtype, int op, MessageKind kind,
                             size_t count);

// True when an exact message from group member `from` is no poison and its header matches;
// otherwise records the disagreement in the context.
bool acceptExact(Context& context, const Buffer& message, qcclDataType_t dtype, int op,
                 MessageKind kind, size_t count, int from);

// Records that `poisoner` (a global rank) reported a disagreement.
void recordPoison(Context& context, int poisoner);

// A message of `bytes` bytes (>= 8) saying "rank <rank> found a disagreement".
void writePoison(uint8_t* out, size_t bytes, int rank);
// The reporting rank, or -1 when the message is not poison.
int poisonSender(const uint8_t* in, size_t bytes);

}  // namespace qccl::coll
