// The codec C API (qccl_codec.h): unpacks the handle and options, calls codecs/codec.h.
#include <cstring>
#include <initializer_list>
#include <string>

#include "codecs/codec.h"
#include "qccl/qccl_codec.h"
#include "src/api/api_guard.h"
#include "src/device/device_codec.h"
#include "src/device/memory_kind.h"

namespace qccl {
namespace {

using codec::CodecSpec;
using codec::ErrorKind;
using codec::throwCodecError;

// opaque[0]: tag (high 32 bits) | rhtSize << 16 | stochastic << 8 | format;
// opaque[1]: topk's value format << 56 | its density in ppm << 32 | block.
constexpr uint64_t kHandleTag = uint64_t(0x7163636Cu) << 32;  // "qccl"

qcclCodec_t packHandle(const CodecSpec& spec) {
  qcclCodec_t handle;
  handle.opaque[0] = kHandleTag | uint64_t(spec.rhtSize) << 16 |
                     uint64_t(spec.stochastic ? 1 : 0) << 8 | uint64_t(spec.format);
  handle.opaque[1] =
      uint64_t(spec.valueFormat) << 56 | uint64_t(spec.densityPpm) << 32 | spec.block;
  return handle;
}

CodecSpec unpackHandle(const qcclCodec_t& handle) {
  const uint64_t word = handle.opaque[0];
  const uint64_t topk = handle.opaque[1] >> 32;
  if ((word & 0xFFFFFFFF00000000ull) != kHandleTag || ((word >> 9) & 0x7F) != 0 ||
      ((topk >> 20) & 0xF) != 0) {
    throwCodecError(ErrorKind::InvalidArgument, "codec handle was not filled by qcclCodecParse");
  }
  CodecSpec spec;
  spec.format = static_cast<codec::Format>(word & 0xFF);
  spec.stochastic = (word >> 8) & 1;
  spec.rhtSize = static_cast<uint16_t>(word >> 16);
  spec.block = static_cast<uint32_t>(handle.opaque[1]);
  spec.valueFormat = static_cast<codec::Format>(topk >> 24);
  spec.densityPpm = static_cast<uint32_t>(topk & 0xFFFFF);
  codec::validateCodecSpec(spec);
  return spec;
}

// Whether the call's buffers are on a GPU (all on one kind of memory); host buffers take a NULL
// stream.
bool onDevice(std::initializer_list<const void*> buffers, cudaStream_t stream) {
  int device = 0, host = 0;
  for (const void* b : buffers) {
    if (b == nullptr) continue;
    (device::placementOf(b).kind == coll::MemoryKind::Device ? device : host) += 1;
  }
  if (device && host) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "codec: some buffers are in host memory, some in GPU memory");
  }
  if (!device && stream != nullptr) {
    throwCodecError(ErrorKind::InvalidUsage,
                    "codec: a CUDA stream was given with host buffers: pass a NULL stream");
  }
  return device != 0;
}

codec::EncodeParams encodeParams(const qcclEncodeOptions_t* options) {
  codec::EncodeParams params;
  if (options == nullptr) return params;
  // Append-only struct: read only the fields the caller's version has.
  qcclEncodeOptions_t o = QCCL_ENCODE_OPTIONS_INITIALIZER;
  if (options->size < offsetof(qcclEncodeOptions_t, seed) || options->size > sizeof o) {
    throwCodecError(ErrorKind::InvalidArgument,
                    "options->size is %zu; set it to sizeof(qcclEncodeOptions_t) (%zu)",
                    options->size, sizeof o);
  }
  std::memcpy(&o, options, options->size);
  if (o.flags & ~uint32_t(QCCL_ENCODE_CRC32C)) {
    throwCodecError(ErrorKind::InvalidArgument, "options->flags 0x%x has unknown bits", o.flags);
  }
  params.seed = o.seed;
  params.rank = o.rank;
  params.call = o.call;
  params.offset = o.offset;
  params.residual = o.residual;
  params.residualType = o.residualType;
  params.residualDecay = o.residualDecay;
  params.crc32c = (o.flags & QCCL_ENCODE_CRC32C) != 0;
  return params;
}

}  // namespace
}  // namespace qccl

using qccl::apiCall;
using qccl::codec::ErrorKind;
using qccl::codec::throwCodecError;

extern "C" {

qcclResult_t qcclCodecParse(const char* spec, qcclCodec_t* codec) {
  return apiCall(__func__, [&] {
    if (spec == nullptr || codec == nullptr) {
      throwCodecError(ErrorKind::InvalidArgument, "spec and codec must not be NULL");
    }
    *codec = qccl::packHandle(qccl::codec::parseCodecSpec(spec));
  });
}

qcclResult_t qcclCodecName(qcclCodec_t codec, char* name, size_t nameSize) {
  return apiCall(__func__, [&] {
    const std::string text = qccl::codec::codecName(qccl::unpackHandle(codec));
    if (name == nullptr || nameSize < text.size() + 1) {
      throwCodecError(ErrorKind::InvalidArgument, "name needs %zu bytes, %zu given",
                      text.size() + 1, name ? nameSize : size_t(0));
    }
    std::memcpy(name, text.c_str(), text.size() + 1);
  });
}

qcclResult_t qcclCodecEncodedSize(qcclCodec_t codec, size_t count, qcclDataType_t dtype,
                                  size_t* bytes) {
  return apiCall(__func__, [&] {
    if (bytes == nullptr) throwCodecError(ErrorKind::InvalidArgument, "bytes is NULL");
    *bytes = qccl::codec::encodedSize(qccl::unpackHandle(codec), count, dtype);
  });
}

qcclResult_t qcclEncode(qcclCodec_t codec, const void* input, size_t count, qcclDataType_t dtype,
                        void* output, size_t outputBytes, const qcclEncodeOptions_t* options,
                        cudaStream_t stream) {
  return apiCall(__func__, [&] {
    const qccl::codec::CodecSpec spec = qccl::unpackHandle(codec);
    const qccl::codec::EncodeParams params = qccl::encodeParams(options);
    if (qccl::onDevice({input, output, params.residual}, stream)) {
      qccl::device::encodeOnDevice(spec, input, count, dtype, output, outputBytes, params, stream);
    } else {
      qccl::codec::encode(spec, input, count, dtype, output, outputBytes, params);
    }
  });
}

qcclResult_t qcclDecode(qcclCodec_t codec, const void* input, size_t inputBytes, void* output,
                        size_t count, qcclDataType_t dtype, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    const qccl::codec::CodecSpec spec = qccl::unpackHandle(codec);
    if (qccl::onDevice({input, output}, stream)) {
      qccl::device::decodeOnDevice(spec, input, inputBytes, output, count, dtype, false, stream);
    } else {
      qccl::codec::decode(spec, input, inputBytes, output, count, dtype, false);
    }
  });
}

qcclResult_t qcclDecodeAccumulate(qcclCodec_t codec, const void* input, size_t inputBytes,
                                  float* accum, size_t count, cudaStream_t stream) {
  return apiCall(__func__, [&] {
    const qccl::codec::CodecSpec spec = qccl::unpackHandle(codec);
    if (qccl::onDevice({input, accum}, stream)) {
      qccl::device::decodeOnDevice(spec, input, inputBytes, accum, count, qcclFloat32, true,
                                   stream);
    } else {
      qccl::codec::decode(spec, input, inputBytes, accum, count, qcclFloat32, true);
    }
  });
}

}  // extern "C"
