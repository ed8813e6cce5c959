#include "collectives/messages.h"

#include <cstring>

namespace qccl::coll {

namespace {
constexpr char kExactMagic[4] = {'Q', 'E', 'X', 'A'};
constexpr char kPoisonMagic[4] = {'Q', 'E', 'R', 'R'};
}  // namespace

void writeExactHeader(uint8_t* out, qcclDataType_t dtype, int op, MessageKind kind, size_t count) {
  std::memcpy(out, kExactMagic, 4);
  out[4] = uint8_t(dtype);
  out[5] = uint8_t(op);
  out[6] = uint8_t(kind);
  out[7] = 0;
  const uint64_t c = count;
  for (int i = 0; i < 8; ++i) out[8 + i] = uint8_t(c >> (8 * i));
}

std::string checkExactHeader(const uint8_t* in, qcclDataType_t dtype, int op, MessageKind kind,
                             size_t count) {
  if (std::memcmp(in, kExactMagic, 4) != 0) {
    return "received a compressed chunk where an exact message was expected (ranks disagree on "
           "codec or size)";
  }
  uint64_t c = 0;
  for (int i = 0; i < 8; ++i) c |= uint64_t(in[8 + i]) << (8 * i);
  if (in[4] != uint8_t(dtype) || in[5] != uint8_t(op) || in[6] != uint8_t(kind) || c != count) {
    return "peer called with dtype " + std::to_string(in[4]) + ", op " + std::to_string(in[5]) +
           ", " + std::to_string(c) + " elements; this rank with dtype " +
           std::to_string(int(dtype)) + ", op " + std::to_string(op) + ", " +
           std::to_string(count) + " elements";
  }
  return "";
}

void writePoison(uint8_t* out, size_t bytes, int rank) {
  std::memset(out, 0, bytes);
  std::memcpy(out, kPoisonMagic, 4);
  const uint32_t r = uint32_t(rank);
  std::memcpy(out + 4, &r, 4);
}

int poisonSender(const uint8_t* in, size_t bytes) {
  if (bytes < 8 || std::memcmp(in, kPoisonMagic, 4) != 0) return -1;
  uint32_t r = 0;
  std::memcpy(&r, in + 4, 4);
  return int(r);
}

void recordPoison(Context& context, int poisoner) {
  context.recordUsageError("rank " + std::to_string(poisoner) +
                           " found that the ranks disagree on count, dtype, op or codec");
}

bool acceptExact(Context& context, const Buffer& message, qcclDataType_t dtype, int op,
                 MessageKind kind, size_t count, int from) {
  const int poisoner = poisonSender(message.data(), message.size());
  if (poisoner >= 0) {
    recordPoison(context, poisoner);
    return false;
  }
  const std::string problem = checkExactHeader(message.data(), dtype, op, kind, count);
  if (!problem.empty()) {
    context.recordUsageError("from rank " + std::to_string(context.group.ranks[size_t(from)]) +
                             ": " + problem);
  }
  return problem.empty();
}

}  // namespace qccl::coll
