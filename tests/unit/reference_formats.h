// Independent reference for the element formats, written from the OCP FP8 / MX specifications
// and docs/CODECS.md's UE5M3 definition in double precision, sharing no code with codecs/element.
// Encoding is by search over the sorted table of representable values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace qccl::test {

struct FormatRef {
  std::string name;
  int expBits;
  int manBits;
  int bias;
  bool isSigned;
  enum Specials { kIeee, kNanOnlyAllOnes, kNone } specials;
  bool keepsInf;  // Inf input encodes as Inf (fp16, bf16) rather than saturating

  int magBits() const { return expBits + manBits; }
  uint32_t codeCount() const { return 1u << (magBits() + (isSigned ? 1 : 0)); }

  bool isNan(uint32_t code) const {
    const uint32_t mag = code & ((1u << magBits()) - 1);
    const uint32_t exp = mag >> manBits;
    if (specials == kIeee) return exp == (1u << expBits) - 1 && (mag & ((1u << manBits) - 1));
    if (specials == kNanOnlyAllOnes) return mag == (1u << magBits()) - 1;
    return false;
  }

  // The value of a code by the textbook formula; NaN for NaN codes.
  double value(uint32_t code) const {
    if (isNan(code)) return std::numeric_limits<double>::quiet_NaN();
    const uint32_t mag = code & ((1u << magBits()) - 1);
    const bool negative = isSigned && (code >> magBits()) & 1;
    const int exp = int(mag >> manBits);
    const double man = double(mag & ((1u << manBits) - 1)) / double(1u << manBits);
    double v;
    if (specials == kIeee && exp == (1 << expBits) - 1) {
      v = std::numeric_limits<double>::infinity();
    } else if (exp == 0) {
      v = std::ldexp(man, 1 - bias);
    } else {
      v = std::ldexp(1.0 + man, exp - bias);
    }
    return negative ? -v : v;
  }

  // Finite non-negative magnitudes, indexed by magnitude code (monotonic increasing).
  std::vector<double> magnitudes() const {
    std::vector<double> m;
    for (uint32_t c = 0; c < (1u << magBits()); ++c) {
      const double v = value(c);
      if (std::isnan(v) || std::isinf(v)) break;
      m.push_back(v);
    }
    return m;
  }

  uint32_t nanCode() const { return (1u << magBits()) - 1; }
  uint32_t infCode() const { return ((1u << expBits) - 1) << manBits; }

  // Round to nearest, ties to the even code; saturate finite overflow (and Inf unless keepsInf).
  uint32_t encode(float f, const std::vector<double>& mags) const {
    if (std::isnan(f)) return nanCode();
    const bool negative = std::signbit(f);
    if (negative && !isSigned) return 0;
    const double a = std::fabs(double(f));
    uint32_t mag;
    if (std::isinf(a) && keepsInf) {
      mag = infCode();
    } else if (a >= mags.back()) {
      mag = uint32_t(mags.size() - 1);
    } else {
      const size_t hi = size_t(std::lower_bound(mags.begin(), mags.end(), a) - mags.begin());
      if (mags[hi] == a || hi == 0) {
        mag = uint32_t(hi);
      } else {
        const double dLo = a - mags[hi - 1], dHi = mags[hi] - a;
        mag = uint32_t(dLo < dHi ? hi - 1 : dHi < dLo ? hi : ((hi - 1) % 2 == 0 ? hi - 1 : hi));
      }
    }
    return negative ? mag | (1u << magBits()) : mag;
  }
};

inline const std::vector<FormatRef>& referenceFormats() {
  static const std::vector<FormatRef> formats = {
      {"E4M3", 4, 3, 7, true, FormatRef::kNanOnlyAllOnes, false},
      {"E5M2", 5, 2, 15, true, FormatRef::kIeee, false},
      {"E2M1", 2, 1, 1, true, FormatRef::kNone, false},
      {"UE5M3", 5, 3, 15, false, FormatRef::kNanOnlyAllOnes, false},
      {"FP16", 5, 10, 15, true, FormatRef::kIeee, true},
      {"BF16", 8, 7, 127, true, FormatRef::kIeee, true},
  };
  return formats;
}

}  // namespace qccl::test
