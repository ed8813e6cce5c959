#include "codecs/codec_spec.h"

#include <cctype>
#include <cstdlib>

#include "codecs/codec_error.h"
#include "codecs/element/hadamard.h"

namespace qccl::codec {

namespace {

bool isPowerOfTwo(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Parses the digits of s (all of it) as a positive integer no larger than 2^31.
bool parseCount(std::string_view s, uint32_t* value) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *value = v;
  return true;
}

Format parseFormat(std::string_view name, std::string_view spec) {
  for (int f = 0; f < kFormatCount; ++f) {
    if (name == formatInfo(static_cast<Format>(f)).name) return static_cast<Format>(f);
  }
  std::string known;
  for (int f = 0; f < kFormatCount; ++f) {
    known += (f ? ", " : "");
    known += formatInfo(static_cast<Format>(f)).name;
  }
  throwCodecError(ErrorKind::InvalidArgument,
                  "codec spec '%.*s': unknown format '%.*s' (known: %s)", int(spec.size()),
                  spec.data(), int(name.size()), name.data(), known.c_str());
}

}  // namespace

bool operator==(const CodecSpec& a, const CodecSpec& b) {
  return a.format == b.format && a.stochastic == b.stochastic && a.rhtSize == b.rhtSize &&
         a.block == b.block;
}

void validateCodecSpec(const CodecSpec& spec) {
  const int f = static_cast<int>(spec.format);
  if (f < 0 || f >= kFormatCount) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: invalid format id %d", f);
  }
  const FormatInfo& info = formatInfo(spec.format);
  if (spec.stochastic && !info.allowsStochastic) {
    throwCodecError(ErrorKind::InvalidArgument, "codec %s: +sr is not defined for this format",
                    info.name);
  }
  if (spec.rhtSize != 0) {
    if (!isBlockScaled(spec.format)) {
      throwCodecError(ErrorKind::InvalidArgument,
                      "codec %s: +rht needs a block-scaled format (it spreads outliers across "
                      "a block's scale)",
                      info.name);
    }
    if (!isPowerOfTwo(spec.rhtSize) || spec.rhtSize < kRhtMinSize || spec.rhtSize > kRhtMaxSize) {
      throwCodecError(ErrorKind::InvalidArgument,
                      "codec %s: +rht size %u must be a power of two in [%d, %d]", info.name,
                      unsigned(spec.rhtSize), kRhtMinSize, kRhtMaxSize);
    }
  }
  if (!isBlockScaled(spec.format)) {
    if (spec.block != 0) {
      throwCodecError(ErrorKind::InvalidArgument, "codec %s: element-wise format takes no /bN",
                      info.name);
    }
    return;
  }
  if (info.blockFixed && spec.block != info.defaultBlock) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec %s: the block size is fixed at %u by the format's specification",
                    info.name, unsigned(info.defaultBlock));
  }
  if (spec.block < kMinBlock || spec.block > kMaxBlock || spec.block % 16 != 0) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec %s: block size %u must be a multiple of 16 in [%u, %u]", info.name,
                    unsigned(spec.block), unsigned(kMinBlock), unsigned(kMaxBlock));
  }
}

CodecSpec parseCodecSpec(std::string_view text) {
  const std::string spec = lowercase(text);
  const std::string_view s(spec);
  size_t end = s.find_first_of("+/");
  CodecSpec out;
  out.format = parseFormat(s.substr(0, end), text);
  out.block = formatInfo(out.format).defaultBlock;
  bool blockGiven = false;
  while (end != std::string_view::npos) {
    const char sep = s[end];
    const size_t next = s.find_first_of("+/", end + 1);
    const std::string_view item =
        s.substr(end + 1, next == std::string_view::npos ? next : next - end - 1);
    uint32_t value = 0;
    if (sep == '+' && item == "sr" && !out.stochastic && !blockGiven) {
      out.stochastic = true;
    } else if (sep == '+' && item.substr(0, 3) == "rht" && out.rhtSize == 0 && !blockGiven) {
      if (item.size() == 3) {
        value = kRhtDefaultSize;
      } else if (!parseCount(item.substr(3), &value) || value > 0xffff) {
        throwCodecError(ErrorKind::InvalidArgument, "codec spec '%.*s': bad +rht size '%.*s'",
                        int(text.size()), text.data(), int(item.size()), item.data());
      } else if (value == 0) {  // not "no rotation": 0 would silently turn +rht off
        throwCodecError(ErrorKind::InvalidArgument,
                        "codec spec '%.*s': +rht size 0 must be a power of two in [%d, %d]",
                        int(text.size()), text.data(), kRhtMinSize, kRhtMaxSize);
      }
      out.rhtSize = static_cast<uint16_t>(value);
    } else if (sep == '/' && item.substr(0, 1) == "b" && !blockGiven &&
               parseCount(item.substr(1), &value)) {
      if (!isBlockScaled(out.format)) {
        throwCodecError(ErrorKind::InvalidArgument,
                        "codec spec '%.*s': element-wise format takes no /bN", int(text.size()),
                        text.data());
      }
      out.block = value;
      blockGiven = true;
    } else {
      throwCodecError(ErrorKind::InvalidArgument,
                      "codec spec '%.*s': unexpected '%c%.*s' (syntax: FORMAT[+sr][+rht[R]][/bN])",
                      int(text.size()), text.data(), sep, int(item.size()), item.data());
    }
    end = next;
  }
  validateCodecSpec(out);
  return out;
}

std::string codecName(const CodecSpec& spec) {
  const FormatInfo& info = formatInfo(spec.format);
  std::string name = info.name;
  if (spec.stochastic) name += "+sr";
  if (spec.rhtSize != 0) {
    name += "+rht";
    if (spec.rhtSize != kRhtDefaultSize) name += std::to_string(spec.rhtSize);
  }
  if (isBlockScaled(spec.format) && spec.block != info.defaultBlock) {
    name += "/b" + std::to_string(spec.block);
  }
  return name;
}

}  // namespace qccl::codec
