// A codec spec "FORMAT[+sr][+rht[R]][/bN]" or "topkD+FORMAT[/bN]" parsed into the settings the
// layout and kernels use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codecs/format.h"

namespace qccl::codec {

constexpr uint32_t kMinBlock = 16;
constexpr uint32_t kMaxBlock = 8192;
// topk densities are whole parts per million: topk0.01 keeps 10000 ppm.
constexpr uint32_t kPpm = 1000000;

struct CodecSpec {
  Format format = Format::None;
  bool stochastic = false;  // +sr
  uint16_t rhtSize = 0;     // +rht run length R; 0 = no rotation
  uint32_t block = 0;       // elements per block scale (topk: per selection); 0 for element-wise
  // topk only (docs/CODECS.md, "Top-k"): the selected values' format, whose default block they
  // take, and the fraction of each block kept.
  Format valueFormat = Format::None;
  uint32_t densityPpm = 0;
};

// The codec the values of a topk spec are encoded with.
CodecSpec topkValueSpec(const CodecSpec& spec);

bool operator==(const CodecSpec& a, const CodecSpec& b);

// Throws CodecError(InvalidArgument) with a message naming what is wrong.
CodecSpec parseCodecSpec(std::string_view spec);

// Checks a spec built field by field (e.g. unpacked from an API handle); throws like parse.
void validateCodecSpec(const CodecSpec& spec);

// The canonical spelling: modifiers in the order +sr, +rht; defaults omitted.
std::string codecName(const CodecSpec& spec);

}  // namespace qccl::codec
