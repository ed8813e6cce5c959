#include "collectives/call_agreement.h"

#include <cstring>

#include "codecs/codec_error.h"
#include "collectives/messages.h"
#include "collectives/phase.h"

namespace qccl::coll {

namespace {

// exact header | format | +sr | rht size (u16) | block (u32) | segment elements (u64) |
// topk's value format | 3 zero bytes | topk's density in ppm (u32)
void describe(const Context& context, const CallShape& call, uint8_t* out) {
  writeExactHeader(out, call.dtype, call.op, call.kind, call.count);
  uint8_t* codec = out + kExactHeaderBytes;
  std::memset(codec, 0, kCallDescriptionBytes - kExactHeaderBytes);
  const codec::CodecSpec spec = call.exact ? codec::CodecSpec{} : context.codec;
  codec[0] = uint8_t(spec.format);
  codec[1] = spec.stochastic ? 1 : 0;
  for (int i = 0; i < 2; ++i) codec[2 + i] = uint8_t(spec.rhtSize >> (8 * i));
  for (int i = 0; i < 4; ++i) codec[4 + i] = uint8_t(spec.block >> (8 * i));
  const uint64_t segment = context.segmentElements;
  for (int i = 0; i < 8; ++i) codec[8 + i] = uint8_t(segment >> (8 * i));
  codec[16] = uint8_t(spec.valueFormat);
  for (int i = 0; i < 4; ++i) codec[20 + i] = uint8_t(spec.densityPpm >> (8 * i));
}

std::string codecText(const uint8_t* codec) {
  codec::CodecSpec spec;
  spec.format = codec::Format(codec[0]);
  spec.stochastic = codec[1] != 0;
  spec.rhtSize = uint16_t(codec[2] | codec[3] << 8);
  spec.block = uint32_t(codec[4]) | uint32_t(codec[5]) << 8 | uint32_t(codec[6]) << 16 |
               uint32_t(codec[7]) << 24;
  spec.valueFormat = codec::Format(codec[16]);
  spec.densityPpm = uint32_t(codec[20]) | uint32_t(codec[21]) << 8 | uint32_t(codec[22]) << 16 |
                    uint32_t(codec[23]) << 24;
  uint64_t segment = 0;
  for (int i = 0; i < 8; ++i) segment |= uint64_t(codec[8 + i]) << (8 * i);
  std::string name;
  try {
    codec::validateCodecSpec(spec);
    name = codec::codecName(spec);
  } catch (const codec::CodecError&) {
    name = "(unknown)";
  }
  return "codec " + name + " in segments of " + std::to_string(segment) + " elements";
}

}  // namespace

bool agreeOnCall(Context& context, const CallShape& call) {
  const int n = context.group.size(), me = context.group.me;
  uint8_t mine[kCallDescriptionBytes];
  describe(context, call, mine);
  Buffer& in = context.workspace->buffer(Slot::AgreementIn, 0);
  in.resize(size_t(n) * kCallDescriptionBytes);
  exchangeWithAll(context, mine, kCallDescriptionBytes, in.data());
  if (!context.usageError.empty()) return false;  // a message of the wrong size
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    const uint8_t* theirs = in.data() + size_t(p) * kCallDescriptionBytes;
    std::string problem = checkExactHeader(theirs, call.dtype, call.op, call.kind, call.count);
    if (problem.empty() && std::memcmp(theirs, mine, kCallDescriptionBytes) != 0) {
      problem = "peer calls with " + codecText(theirs + kExactHeaderBytes) + "; this rank with " +
                codecText(mine + kExactHeaderBytes);
    }
    if (!problem.empty()) {
      context.recordUsageError("from rank " + std::to_string(context.group.ranks[size_t(p)]) +
                               ": " + problem);
      return false;
    }
  }
  return true;
}

}  // namespace qccl::coll
