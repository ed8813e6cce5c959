#include "codecs/codec.h"

#include <cstring>
#include <vector>

#include "codecs/chunk_header.h"
#include "codecs/chunk_layout.h"
#include "codecs/codec_error.h"
#include "codecs/cpu/kernels.h"

namespace qccl::codec {

namespace {

float* scratchFor(const CodecSpec& spec) {
  thread_local std::vector<float> scratch;
  const size_t need = kernelScratchFloats(spec);
  if (scratch.size() < need) scratch.resize(need);
  return scratch.data();
}

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
  const CodecSpec found{static_cast<Format>(h.format), spec.stochastic, h.rhtSize, h.block};
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
  const bool needsChunkScale = spec.format == Format::NvFp4;
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
  return layout;
}

void encode(const CodecSpec& spec, const void* input, size_t count, qcclDataType_t dtype,
            void* output, size_t outputBytes, const EncodeParams& params,
            const KernelTable& kernels) {
  const ChunkLayout layout = checkEncode(spec, input, count, dtype, output, outputBytes, params);
  uint8_t* out = static_cast<uint8_t*>(output);
  // The padding of each section is zeroed so that equal inputs give byte-identical chunks.
  std::memset(out + layout.scalesOffset, 0, layout.scalesBytes);
  if (layout.elementsBytes) {
    std::memset(out + layout.elementsOffset + layout.elementsBytes - kSectionAlign, 0,
                kSectionAlign);
  }
  EncodeJob job{};
  job.spec = spec;
  job.input = input;
  job.inputType = dtype;
  job.count = count;
  job.paddedCount = layout.paddedCount;
  job.scales = out + layout.scalesOffset;
  job.elements = out + layout.elementsOffset;
  job.seed = params.seed;
  job.rank = params.rank;
  job.call = params.call;
  job.offset = params.offset;
  job.residual = params.residual;
  job.residualType = params.residualType;
  job.scratch = scratchFor(spec);
  ChunkHeader h;
  h.format = static_cast<uint8_t>(spec.format);
  h.flags = uint8_t((spec.stochastic ? kFlagStochastic : 0) | (params.crc32c ? kFlagCrc32c : 0));
  h.sourceType = static_cast<uint8_t>(dtype);
  h.block = spec.block;
  h.rhtSize = spec.rhtSize;
  h.count = count;
  h.chunkScale = kernels.encode(job);
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
  const ChunkLayout layout = chunkLayout(spec, count, static_cast<qcclDataType_t>(h.sourceType));
  DecodeJob job{};
  job.spec = spec;
  job.sourceType = static_cast<qcclDataType_t>(h.sourceType);
  job.scales = in + layout.scalesOffset;
  job.elements = in + layout.elementsOffset;
  job.count = count;
  job.paddedCount = layout.paddedCount;
  job.chunkScale = h.chunkScale;
  job.seed = h.seed;
  job.output = output;
  job.outputType = dtype;
  job.accumulate = accumulate;
  job.scratch = scratchFor(spec);
  kernels.decode(job);
}

}  // namespace qccl::codec
