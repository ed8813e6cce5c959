#include "codecs/codec.h"

#include <cstring>
#include <vector>

#include "codecs/chunk_header.h"
#include "codecs/chunk_layout.h"
#include "codecs/codec_error.h"
#include "codecs/cpu/kernels.h"
#include "codecs/dense_sections.h"
#include "codecs/topk_codec.h"

namespace qccl::codec {

namespace {

bool overlaps(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

void requireNonNull(const void* p, const char* what, size_t count) {
  if (p == nullptr && count > 0) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: %s is NULL", what);
  }
}

// The chunk's header against what the caller says it should hold; returns its layout. payload:
// the chunk's bytes after the header, for its CRC32C; nullptr where they cannot be read (device
// memory), and then a chunk that carries a CRC32C is refused.
ChunkLayout checkChunk(const CodecSpec& spec, const ChunkHeader& h, size_t count, size_t inputBytes,
                       const uint8_t* payload, const KernelTable& kernels) {
  const CodecSpec found{static_cast<Format>(h.format),      spec.stochastic, h.rhtSize, h.block,
                        static_cast<Format>(h.valueFormat), h.densityPpm};
  if (!(found == spec) || h.count != count) {
    throwCodecError(ErrorKind::InvalidUsage,
                    "chunk holds %llu elements of codec %s; this call expects %zu elements of %s",
                    static_cast<unsigned long long>(h.count), codecName(found).c_str(), count,
                    codecName(spec).c_str());
  }
  const ChunkLayout layout = chunkLayout(spec, count, static_cast<qcclDataType_t>(h.sourceType));
  if (h.payloadBytes != layout.totalBytes - kChunkHeaderBytes || inputBytes < layout.totalBytes) {
    throwCodecError(ErrorKind::InvalidUsage,
                    "chunk: %zu bytes given, header declares %llu payload bytes, layout needs %zu",
                    inputBytes, static_cast<unsigned long long>(h.payloadBytes), layout.totalBytes);
  }
  const Format scaled = spec.format == Format::TopK ? spec.valueFormat : spec.format;
  const bool needsChunkScale = scaled == Format::NvFp4;
  const bool scaleOk = needsChunkScale ? (h.chunkScale > 0.0f && h.chunkScale <= 3.40282347e38f)
                                       : h.chunkScale == 1.0f;
  if (!scaleOk) {
    throwCodecError(ErrorKind::InvalidUsage, "chunk: invalid chunk scale %g", double(h.chunkScale));
  }
  if ((h.flags & kFlagCrc32c) && payload == nullptr) {
    throwCodecError(ErrorKind::InvalidUsage,
                    "chunk: its CRC32C is verified on host memory only; this chunk is on a GPU");
  }
  if (h.flags & kFlagCrc32c) {
    const uint32_t crc = kernels.crc32c(0, payload, h.payloadBytes);
    if (crc != h.crc32c) {
      throwCodecError(ErrorKind::InvalidUsage, "chunk: CRC32C mismatch (0x%08x != 0x%08x)", crc,
                      h.crc32c);
    }
  }
  return layout;
}

}  // namespace

size_t encodedSize(const CodecSpec& spec, size_t count, qcclDataType_t dtype) {
  return chunkLayout(spec, count, dtype).totalBytes;
}

void requireDeviceKernels(const CodecSpec& spec) {
  if (spec.format == Format::TopK) {
    throwCodecError(ErrorKind::InvalidUsage,
                    "codec %s: top-k selection runs on host memory only (no GPU kernel yet)",
                    codecName(spec).c_str());
  }
}

ChunkLayout checkEncode(const CodecSpec& spec, const void* input, size_t count,
                        qcclDataType_t dtype, const void* output, size_t outputBytes,
                        const EncodeParams& params) {
  const ChunkLayout layout = chunkLayout(spec, count, dtype);
  requireNonNull(input, "input", count);
  requireNonNull(output, "output", 1);
  if (outputBytes < layout.totalBytes) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec %s: output holds %zu bytes, the chunk needs %zu (qcclCodecEncodedSize)",
                    codecName(spec).c_str(), outputBytes, layout.totalBytes);
  }
  const size_t inputBytes = count * dataTypeBytes(dtype);
  if (overlaps(input, inputBytes, output, layout.totalBytes)) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: input and output overlap");
  }
  if (params.residual) {
    if (params.residualType != qcclFloat32 && params.residualType != qcclBfloat16) {
      throwCodecError(ErrorKind::InvalidArgument,
                      "codec: residual dtype %d (error feedback keeps qcclFloat32 or qcclBfloat16)",
                      int(params.residualType));
    }
    const size_t residualBytes = count * dataTypeBytes(params.residualType);
    if (overlaps(params.residual, residualBytes, output, layout.totalBytes) ||
        overlaps(params.residual, residualBytes, input, inputBytes)) {
      throwCodecError(ErrorKind::InvalidArgument, "codec: residual overlaps input or output");
    }
  }
  if (!validResidualDecay(params.residualDecay)) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: residual decay %g is not in [0, 1]",
                    double(params.residualDecay));
  }
  return layout;
}

void encode(const CodecSpec& spec, const void* input, size_t count, qcclDataType_t dtype,
            void* output, size_t outputBytes, const EncodeParams& params,
            const KernelTable& kernels) {
  const ChunkLayout layout = checkEncode(spec, input, count, dtype, output, outputBytes, params);
  uint8_t* out = static_cast<uint8_t*>(output);
  ChunkHeader h;
  h.format = static_cast<uint8_t>(spec.format);
  h.flags = uint8_t((spec.stochastic ? kFlagStochastic : 0) | (params.crc32c ? kFlagCrc32c : 0));
  h.sourceType = static_cast<uint8_t>(dtype);
  h.block = spec.block;
  h.rhtSize = spec.rhtSize;
  h.count = count;
  h.valueFormat = static_cast<uint8_t>(spec.valueFormat);
  h.densityPpm = spec.densityPpm;
  h.chunkScale = spec.format == Format::TopK
                     ? encodeTopk(spec, input, count, dtype, out, params, kernels)
                     : encodeSections(spec, layout, input, dtype, out, params, kernels);
  h.seed = params.seed;
  h.payloadBytes = layout.totalBytes - kChunkHeaderBytes;
  if (params.crc32c) h.crc32c = kernels.crc32c(0, out + kChunkHeaderBytes, h.payloadBytes);
  writeChunkHeader(h, out);
}

void validateChunk(const CodecSpec& spec, const void* input, size_t inputBytes, size_t count) {
  requireNonNull(input, "input", 1);
  const uint8_t* in = static_cast<const uint8_t*>(input);
  checkChunk(spec, readChunkHeader(in, inputBytes), count, inputBytes, in + kChunkHeaderBytes,
             cpuKernels());
}

ChunkHeader checkDecode(const CodecSpec& spec, const uint8_t* header, const void* input,
                        size_t inputBytes, const void* output, size_t count, qcclDataType_t dtype,
                        bool accumulate, const uint8_t* payload, const KernelTable& kernels) {
  requireNonNull(input, "input", 1);
  requireNonNull(output, "output", count);
  if (!isCodecDataType(dtype) || (accumulate && dtype != qcclFloat32)) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: unsupported output dtype %d%s", int(dtype),
                    accumulate ? " (accumulation is into fp32)" : "");
  }
  const ChunkHeader h = readChunkHeader(header, inputBytes);
  const ChunkLayout layout = checkChunk(spec, h, count, inputBytes, payload, kernels);
  if (overlaps(input, layout.totalBytes, output, count * dataTypeBytes(dtype))) {
    throwCodecError(ErrorKind::InvalidArgument, "codec: input and output overlap");
  }
  return h;
}

void decode(const CodecSpec& spec, const void* input, size_t inputBytes, void* output, size_t count,
            qcclDataType_t dtype, bool accumulate, const KernelTable& kernels) {
  const uint8_t* in = static_cast<const uint8_t*>(input);
  const ChunkHeader h = checkDecode(spec, in, input, inputBytes, output, count, dtype, accumulate,
                                    in ? in + kChunkHeaderBytes : nullptr, kernels);
  if (spec.format == Format::TopK)
    return decodeTopk(spec, h, in, output, count, dtype, accumulate, kernels);
  const qcclDataType_t sourceType = static_cast<qcclDataType_t>(h.sourceType);
  decodeSections(spec, chunkLayout(spec, count, sourceType), sourceType, in, h.chunkScale, h.seed,
                 output, dtype, accumulate, kernels);
}

}  // namespace qccl::codec
