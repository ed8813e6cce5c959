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

// A density "D" of topkD: a decimal fraction in (0, 1] with at most six decimals, as ppm.
uint32_t parseDensity(std::string_view d, std::string_view spec) {
  const size_t dot = d.find('.');
  const std::string_view whole = d.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? "" : d.substr(dot + 1);
  uint32_t w = 0, f = 0;
  const bool digits = (whole.empty() || parseCount(whole, &w)) &&
                      (fraction.empty() || parseCount(fraction, &f)) &&
                      !(whole.empty() && fraction.empty());
  if (!digits || fraction.size() > 6) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec spec '%.*s': topk density '%.*s' must be a decimal fraction with at "
                    "most six decimals, e.g. topk0.01",
                    int(spec.size()), spec.data(), int(d.size()), d.data());
  }
  for (size_t i = fraction.size(); i < 6; ++i) f *= 10;
  const uint64_t ppm = uint64_t(w) * kPpm + f;
  if (ppm == 0 || ppm > kPpm) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec spec '%.*s': topk density '%.*s' must be in (0, 1]", int(spec.size()),
                    spec.data(), int(d.size()), d.data());
  }
  return uint32_t(ppm);
}

// "topkD+FORMAT[/bN]": the value codec takes no modifiers; /bN is the selection block.
CodecSpec parseTopkSpec(std::string_view s, std::string_view text) {
  const size_t plus = s.find('+');
  if (plus == std::string_view::npos) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec spec '%.*s': topk needs a value format (syntax: topkD+FORMAT[/bN])",
                    int(text.size()), text.data());
  }
  CodecSpec out;
  out.format = Format::TopK;
  out.densityPpm = parseDensity(s.substr(4, plus - 4), text);
  out.block = formatInfo(Format::TopK).defaultBlock;
  const std::string_view rest = s.substr(plus + 1);
  const size_t slash = rest.find('/');
  const std::string_view value = rest.substr(0, slash);
  if (value.find('+') != std::string_view::npos) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec spec '%.*s': topk's value format takes no modifiers (+sr, +rht)",
                    int(text.size()), text.data());
  }
  out.valueFormat = parseFormat(value, text);
  if (slash != std::string_view::npos) {
    const std::string_view item = rest.substr(slash + 1);
    if (item.substr(0, 1) != "b" || !parseCount(item.substr(1), &out.block)) {
      throwCodecError(ErrorKind::InvalidArgument,
                      "codec spec '%.*s': unexpected '/%.*s' (syntax: topkD+FORMAT[/bN])",
                      int(text.size()), text.data(), int(item.size()), item.data());
    }
  }
  validateCodecSpec(out);
  return out;
}

void validateTopk(const CodecSpec& spec) {
  if (spec.stochastic || spec.rhtSize != 0) {
    throwCodecError(ErrorKind::InvalidArgument, "codec topk: takes neither +sr nor +rht");
  }
  const int v = static_cast<int>(spec.valueFormat);
  if (v <= 0 || v >= kFormatCount || spec.valueFormat == Format::TopK) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec topk: value format id %d (any format but none and topk)", v);
  }
  if (spec.densityPpm == 0 || spec.densityPpm > kPpm) {
    throwCodecError(ErrorKind::InvalidArgument, "codec topk: density %u ppm is not in (0, 1]",
                    unsigned(spec.densityPpm));
  }
  if (spec.block < kMinBlock || spec.block > kMaxBlock || spec.block % 16 != 0) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec topk: block size %u must be a multiple of 16 in [%u, %u]",
                    unsigned(spec.block), unsigned(kMinBlock), unsigned(kMaxBlock));
  }
}

std::string densityText(uint32_t ppm) {
  std::string text = std::to_string(ppm / kPpm);
  if (ppm % kPpm == 0) return text;
  std::string fraction = std::to_string(ppm % kPpm + kPpm).substr(1);  // six digits, not all 0
  while (fraction.back() == '0') fraction.pop_back();
  return text + "." + fraction;
}

}  // namespace

bool operator==(const CodecSpec& a, const CodecSpec& b) {
  return a.format == b.format && a.stochastic == b.stochastic && a.rhtSize == b.rhtSize &&
         a.block == b.block && a.valueFormat == b.valueFormat && a.densityPpm == b.densityPpm;
}

CodecSpec topkValueSpec(const CodecSpec& spec) {
  CodecSpec value;
  value.format = spec.valueFormat;
  value.block = formatInfo(spec.valueFormat).defaultBlock;
  return value;
}

void validateCodecSpec(const CodecSpec& spec) {
  const int f = static_cast<int>(spec.format);
  if (f < 0 || f >= kFormatCount) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: invalid format id %d", f);
  }
  if (spec.format == Format::TopK) return validateTopk(spec);
  if (spec.valueFormat != Format::None || spec.densityPpm != 0) {
    throwCodecError(ErrorKind::InvalidArgument, "codec %s: topk settings on a dense format",
                    formatInfo(spec.format).name);
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
  if (s.substr(0, 4) == "topk") return parseTopkSpec(s, text);
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
  if (spec.format == Format::TopK) {
    name += densityText(spec.densityPpm) + "+" + formatInfo(spec.valueFormat).name;
    if (spec.block != info.defaultBlock) name += "/b" + std::to_string(spec.block);
    return name;
  }
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
