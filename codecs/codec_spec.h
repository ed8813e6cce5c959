// A codec spec "FORMAT[+sr][+rht[R]][/bN]" parsed into the settings the layout and kernels use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codecs/format.h"

namespace qccl::codec {

constexpr uint32_t kMinBlock = 16;
constexpr uint32_t kMaxBlock = 8192;

struct CodecSpec {
  Format format = Format::None;
  bool stochastic = false;  // +sr
  uint16_t rhtSize = 0;     // +rht run length R; 0 = no rotation
  uint32_t block = 0;       // elements per block scale; 0 for element-wise formats
};

bool operator==(const CodecSpec& a, const CodecSpec& b);

// Throws CodecError(InvalidArgument) with a message naming what is wrong.
CodecSpec parseCodecSpec(std::string_view spec);

// Checks a spec built field by field (e.g. unpacked from an API handle); throws like parse.
void validateCodecSpec(const CodecSpec& spec);

// The canonical spelling: modifiers in the order +sr, +rht; defaults omitted.
std::string codecName(const CodecSpec& spec);

}  // namespace qccl::codec
