#include "codecs/topk_codec.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "codecs/codec_error.h"
#include "codecs/dense_sections.h"
#include "codecs/element/minifloat.h"
#include "codecs/topk_layout.h"

namespace qccl::codec {

namespace {

constexpr uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr uint32_t kInfinityBits = 0x7F800000u;
constexpr uint32_t kNanBits = 0x7FC00000u;  // what a non-finite block decodes to, as dense ones

float toFloat(const void* data, qcclDataType_t type, size_t i) {
  if (type == qcclFloat32) return static_cast<const float*>(data)[i];
  const uint16_t v = static_cast<const uint16_t*>(data)[i];
  return type == qcclBfloat16 ? qccl::decode<Bf16>(v) : qccl::decode<Fp16>(v);
}

void storeFloat(float v, void* data, qcclDataType_t type, size_t i) {
  if (type == qcclFloat32) {
    static_cast<float*>(data)[i] = v;
  } else {
    static_cast<uint16_t*>(data)[i] =
        uint16_t(type == qcclBfloat16 ? encodeRne<Bf16>(v) : encodeRne<Fp16>(v));
  }
}

// p = x + (decay * e) over one block (the collectives' fp32 case in one vectorisable pass); decay 0
// reads no residual, as the dense kernels (kernels_impl.h).
void loadBlock(const void* input, qcclDataType_t dtype, const void* residual,
               qcclDataType_t residualType, float decay, size_t start, uint32_t length, float* p) {
  if (decay == 0.0f) residual = nullptr;
  if (dtype == qcclFloat32 && (!residual || residualType == qcclFloat32)) {
    const float* __restrict x = static_cast<const float*>(input) + start;
    if (!residual) {
      std::memcpy(p, x, 4 * size_t(length));
      return;
    }
    const float* __restrict e = static_cast<const float*>(residual) + start;
    for (uint32_t i = 0; i < length; ++i) p[i] = x[i] + decay * e[i];
    return;
  }
  for (uint32_t i = 0; i < length; ++i) {
    p[i] = toFloat(input, dtype, start + i) +
           (residual ? decay * toFloat(residual, residualType, start + i) : 0.0f);
  }
}

// e = p over one block: what a block sends nothing of stays in the residual.
void storeBlock(const float* p, uint32_t length, void* residual, qcclDataType_t residualType,
                size_t start) {
  if (residualType == qcclFloat32) {
    std::memcpy(static_cast<float*>(residual) + start, p, 4 * size_t(length));
    return;
  }
  for (uint32_t i = 0; i < length; ++i) storeFloat(p[i], residual, residualType, start + i);
}

// Positions packed as the index field says: bitmap bits, or w-bit positions low bits first.
void writeIndexField(const uint16_t* positions, uint32_t keep, const TopkIndexField& field,
                     uint32_t w, uint8_t* out) {
  if (field.bitmap) {
    for (uint32_t j = 0; j < keep; ++j) out[positions[j] >> 3] |= uint8_t(1u << (positions[j] & 7));
    return;
  }
  uint64_t pending = 0;
  uint32_t bits = 0;
  for (uint32_t j = 0; j < keep; ++j) {
    pending |= uint64_t(positions[j]) << bits;
    for (bits += w; bits >= 8; bits -= 8, pending >>= 8) *out++ = uint8_t(pending);
  }
  if (bits) *out = uint8_t(pending);
}

// The inverse; false when the field does not hold exactly keep ascending positions < length.
bool readIndexField(const uint8_t* in, uint32_t keep, uint32_t length, const TopkIndexField& field,
                    uint32_t w, uint16_t* positions) {
  uint32_t n = 0;
  if (field.bitmap) {
    for (size_t byte = 0; byte < field.bytes; byte += 8) {  // 64 bits at a time
      uint64_t bits = 0;
      std::memcpy(&bits, in + byte, field.bytes - byte < 8 ? field.bytes - byte : 8);
      for (; bits != 0; bits &= bits - 1) {
        const size_t i = byte * 8 + size_t(__builtin_ctzll(bits));
        if (i >= length || n == keep) return false;
        positions[n++] = uint16_t(i);
      }
    }
    return n == keep;
  }
  uint64_t pending = 0;
  uint32_t bits = 0;
  for (; n < keep; ++n) {
    for (; bits < w; bits += 8) pending |= uint64_t(*in++) << bits;
    const uint32_t position = uint32_t(pending & ((uint64_t(1) << w) - 1));
    pending >>= w;
    bits -= w;
    if (position >= length || (n > 0 && position <= positions[n - 1])) return false;
    positions[n] = uint16_t(position);
  }
  return true;
}

struct TopkBuffers {
  TopkScratch select;
  std::vector<float> block;  // x + e of the block being selected
  std::vector<uint16_t> positions;
  std::vector<float> values;   // kept values, all blocks
  std::vector<float> decoded;  // their decode, for error feedback
};

TopkBuffers& buffers() {
  thread_local TopkBuffers b;
  return b;
}

// A histogram of keys bins their top 11 bits (exponent and 3 mantissa bits).
constexpr int kBinShift = 20;
constexpr int kBins = 2048;

// The bin of a histogram that holds the keep-th largest key, and how many keys lie above it.
struct Bin {
  uint32_t index;
  uint32_t above;
};
Bin binOfKth(const uint32_t* histogram, uint32_t keep) {
  Bin b{kBins - 1, 0};
  while (b.above + histogram[b.index] < keep) b.above += histogram[b.index--];
  return b;
}

// The keep-th largest of m keys, and how many keys are larger. Many keys are first narrowed to
// the threshold's histogram bin, since ordering is the costly part.
struct Threshold {
  uint32_t key;
  uint32_t greater;
};
Threshold kthLargest(const uint32_t* keys, uint32_t m, uint32_t keep, uint32_t* work) {
  uint32_t above = 0, inBin = m;
  if (m > 256) {
    uint32_t histogram[kBins] = {};
    for (uint32_t j = 0; j < m; ++j) ++histogram[keys[j] >> kBinShift];
    const Bin bin = binOfKth(histogram, keep);
    above = bin.above;
    inBin = 0;
    for (uint32_t j = 0; j < m; ++j) {
      work[inBin] = keys[j];
      inBin += keys[j] >> kBinShift == bin.index;
    }
  } else {
    std::copy(keys, keys + m, work);
  }
  const uint32_t need = keep - above;  // in [1, inBin]
  std::nth_element(work, work + (need - 1), work + inBin, std::greater<uint32_t>());
  const uint32_t key = work[need - 1];
  return {key, above + uint32_t(std::count_if(work, work + inBin,
                                              [key](uint32_t k) { return k > key; }))};
}

// Of m gathered indices, ascending, that hold the keep largest keys (every index left out has a
// smaller key than every one gathered), writes those keep to positions: in index order every key
// above the keep-th largest T and the first keys equal to it.
void keepLargest(const uint16_t* gathered, const uint32_t* keys, uint32_t m, uint32_t keep,
                 uint32_t* work, uint16_t* positions) {
  const Threshold t = kthLargest(keys, m, keep, work);
  uint32_t equalToTake = keep - t.greater, n = 0;
  for (uint32_t j = 0; j < m && n < keep; ++j) {  // without a branch on the data
    const bool equal = keys[j] == t.key;
    const bool take = keys[j] > t.key || (equal && equalToTake > 0);
    positions[n] = gathered[j];
    n += take;
    equalToTake -= equal && take;
  }
}

// The keys' histogram bins their top 11 bits (exponent and 3 mantissa bits): every index in or
// above the bin of the keep-th largest is gathered.
uint32_t gatherByHistogram(const float* p, uint32_t length, uint32_t keep, TopkScratch& s) {
  uint32_t histogram[kBins] = {};
  for (uint32_t i = 0; i < length; ++i) ++histogram[(floatBits(p[i]) & kAbsMask) >> kBinShift];
  const uint32_t bin = binOfKth(histogram, keep).index;
  uint32_t m = 0;
  for (uint32_t i = 0; i < length; ++i) {
    const uint32_t key = floatBits(p[i]) & kAbsMask;
    s.indices[m] = uint16_t(i);
    s.candidates[m] = key;
    m += key >> kBinShift >= bin;
  }
  return m;
}

}  // namespace

bool selectTopk(const float* p, uint32_t length, uint32_t keep, TopkScratch& scratch,
                uint16_t* positions) {
  scratch.candidates.resize(length);
  scratch.indices.resize(length);
  scratch.keys.resize(length);
  // One pass gathers every index whose key reaches an estimate t0 of the threshold, from a fixed
  // sample of the block (every 16th key) set so that about twice keep are expected to reach it;
  // the exact selection then orders only those. Should fewer than keep reach t0, or the block
  // keep too many for a sample to help, a histogram of the keys places the threshold instead.
  // Either way the result is the definition's: the estimate only bounds where to look.
  constexpr uint32_t kStride = 16;
  const uint32_t samples = length / kStride;
  const uint64_t rank = (2 * uint64_t(keep) * samples + length - 1) / length + 2;
  uint32_t estimate = 0;
  if (keep < length && rank < samples) {
    uint32_t* sample = scratch.keys.data();
    for (uint32_t j = 0; j < samples; ++j) sample[j] = floatBits(p[j * kStride]) & kAbsMask;
    std::nth_element(sample, sample + (rank - 1), sample + samples, std::greater<uint32_t>());
    estimate = sample[rank - 1];
  }
  uint32_t largest = 0, m = 0;
  for (uint32_t i = 0; i < length; ++i) {  // without a branch: few keys reach the estimate
    const uint32_t key = floatBits(p[i]) & kAbsMask;
    largest = key > largest ? key : largest;
    scratch.indices[m] = uint16_t(i);
    scratch.candidates[m] = key;
    m += key >= estimate;
  }
  if (largest >= kInfinityBits) return false;
  if (m < keep) m = gatherByHistogram(p, length, keep, scratch);
  keepLargest(scratch.indices.data(), scratch.candidates.data(), m, keep, scratch.keys.data(),
              positions);
  return true;
}

float encodeTopk(const CodecSpec& spec, const void* input, size_t count, qcclDataType_t dtype,
                 uint8_t* chunk, const EncodeParams& params, const KernelTable& kernels) {
  const TopkLayout l = topkLayout(spec, count);
  TopkBuffers& buf = buffers();
  buf.block.resize(l.block);
  buf.positions.resize(l.values);
  buf.values.resize(l.values);
  std::memset(chunk + l.flagsOffset, 0, l.flagsBytes + l.indexBytes);  // fields are OR-ed in
  for (size_t b = 0; b < l.blocks; ++b) {
    const TopkBlock t = topkBlock(l, b);
    const size_t start = b * l.block;
    float* p = buf.block.data();
    loadBlock(input, dtype, params.residual, params.residualType, params.residualDecay, start,
              t.length, p);
    uint16_t* positions = buf.positions.data() + t.firstValue;
    float* values = buf.values.data() + t.firstValue;
    if (!selectTopk(p, t.length, t.keep, buf.select, positions)) {
      chunk[l.flagsOffset + b / 8] |= uint8_t(1u << (b % 8));  // decodes to NaN, keeps e
      std::fill(values, values + t.keep, 0.0f);
      continue;
    }
    writeIndexField(positions, t.keep, t.field, l.positionBits,
                    chunk + l.indexOffset + t.fieldOffset);
    for (uint32_t j = 0; j < t.keep; ++j) values[j] = p[positions[j]];
    // e = p where nothing is sent; the kept ones are set below.
    if (params.residual) storeBlock(p, t.length, params.residual, params.residualType, start);
  }
  const CodecSpec valueSpec = topkValueSpec(spec);
  EncodeParams valueParams;
  valueParams.seed = params.seed;
  const float chunkScale = encodeSections(valueSpec, l.valueSections, buf.values.data(),
                                          qcclFloat32, chunk, valueParams, kernels);
  if (params.residual) {
    buf.decoded.resize(l.values);
    decodeSections(valueSpec, l.valueSections, qcclFloat32, chunk, chunkScale, params.seed,
                   buf.decoded.data(), qcclFloat32, false, kernels);
    for (size_t b = 0; b < l.blocks; ++b) {
      if (chunk[l.flagsOffset + b / 8] >> (b % 8) & 1) continue;
      const TopkBlock t = topkBlock(l, b);
      for (uint32_t j = 0; j < t.keep; ++j) {
        const size_t v = t.firstValue + j;
        storeFloat(buf.values[v] - buf.decoded[v], params.residual, params.residualType,
                   b * l.block + buf.positions[v]);
      }
    }
  }
  return chunkScale;
}

void decodeTopk(const CodecSpec& spec, const ChunkHeader& h, const uint8_t* chunk, void* output,
                size_t count, qcclDataType_t dtype, bool accumulate, const KernelTable& kernels) {
  const TopkLayout l = topkLayout(spec, count);
  TopkBuffers& buf = buffers();
  buf.positions.resize(l.values);
  const uint8_t* flags = chunk + l.flagsOffset;
  auto nonFinite = [flags](size_t b) { return (flags[b / 8] >> (b % 8) & 1) != 0; };
  for (size_t b = 0; b < l.blocks; ++b) {
    const TopkBlock t = topkBlock(l, b);
    if (!nonFinite(b) &&
        !readIndexField(chunk + l.indexOffset + t.fieldOffset, t.keep, t.length, t.field,
                        l.positionBits, buf.positions.data() + t.firstValue)) {
      throwCodecError(ErrorKind::InvalidUsage,
                      "chunk: topk block %zu's index field does not hold %u ascending positions "
                      "below %u",
                      b, unsigned(t.keep), unsigned(t.length));
    }
  }
  buf.values.resize(l.values);
  decodeSections(topkValueSpec(spec), l.valueSections, qcclFloat32, chunk, h.chunkScale, h.seed,
                 buf.values.data(), qcclFloat32, false, kernels);
  const float nan = bitsFloat(kNanBits);
  for (size_t b = 0; b < l.blocks; ++b) {
    const TopkBlock t = topkBlock(l, b);
    const size_t start = b * l.block;
    const uint16_t* positions = buf.positions.data() + t.firstValue;
    const float* values = buf.values.data() + t.firstValue;
    if (accumulate) {  // where nothing was kept +0 would be added: left as it is (-0 stays -0)
      float* acc = static_cast<float*>(output) + start;
      if (nonFinite(b)) {
        for (uint32_t i = 0; i < t.length; ++i) acc[i] += nan;
      } else {
        for (uint32_t j = 0; j < t.keep; ++j) acc[positions[j]] += values[j];
      }
    } else if (nonFinite(b)) {
      for (uint32_t i = 0; i < t.length; ++i) storeFloat(nan, output, dtype, start + i);
    } else {
      std::memset(static_cast<uint8_t*>(output) + start * dataTypeBytes(dtype), 0,
                  t.length * dataTypeBytes(dtype));
      for (uint32_t j = 0; j < t.keep; ++j)
        storeFloat(values[j], output, dtype, start + positions[j]);
    }
  }
}

}  // namespace qccl::codec
