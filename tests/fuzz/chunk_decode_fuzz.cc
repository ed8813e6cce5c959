// libFuzzer target: the chunk decoder (qcclDecode, qcclDecodeAccumulate) on any bytes. Input:
// one byte choosing the codec, one byte choosing the output dtype and whether to accumulate, then
// the chunk. A chunk whose header parses and that carries a CRC32C is decoded a second time with
// the CRC made to match, so that mutated payloads reach the element decoders instead of stopping
// at the checksum. A refused chunk must leave the output untouched.
#include <qccl/qccl_codec.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "codecs/chunk_header.h"
#include "codecs/codec_error.h"
#include "codecs/cpu/kernels.h"

namespace {

const char* const kSpecs[] = {"none",
                              "bf16",
                              "fp16",
                              "fp8e4m3",
                              "fp8e5m2",
                              "mxfp8",
                              "mxfp4",
                              "nvfp4",
                              "fp4ue5m3",
                              "int8",
                              "int4",
                              "sign1",
                              "int4+rht",
                              "nvfp4+sr+rht",
                              "fp8e4m3+sr",
                              "int4/b64",
                              "int8/b128",
                              "bf16+sr",
                              "int4+rht256",
                              "fp4ue5m3+rht",
                              "int2",
                              "topk0.05+int2/b64",
                              "topk0.3+bf16/b128"};
constexpr size_t kMaxCount = 1 << 16;

void decodeOnce(qcclCodec_t codec, const uint8_t* chunk, size_t bytes, size_t count, int mode) {
  const qcclDataType_t types[] = {qcclFloat32, qcclBfloat16, qcclFloat16};
  const bool accumulate = mode & 4;
  const qcclDataType_t type = accumulate ? qcclFloat32 : types[mode % 3];
  std::vector<uint8_t> out(count * 4, 0xA5);
  const std::vector<uint8_t> before = out;
  const qcclResult_t r =
      accumulate ? qcclDecodeAccumulate(codec, chunk, bytes, reinterpret_cast<float*>(out.data()),
                                        count, nullptr)
                 : qcclDecode(codec, chunk, bytes, out.data(), count, type, nullptr);
  if (r != qcclSuccess && out != before) std::abort();  // an error must not touch the output
  if (r != qcclSuccess && std::strlen(qcclGetLastError(nullptr)) == 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  qcclCodec_t codec;
  if (qcclCodecParse(kSpecs[data[0] % (sizeof kSpecs / sizeof *kSpecs)], &codec) != qcclSuccess) {
    std::abort();
  }
  const int mode = data[1];
  std::vector<uint8_t> chunk(data + 2, data + size);
  size_t count = 16;
  try {
    const qccl::codec::ChunkHeader h = qccl::codec::readChunkHeader(chunk.data(), chunk.size());
    if (h.count <= kMaxCount) count = size_t(h.count);
    decodeOnce(codec, chunk.data(), chunk.size(), count, mode);
    const size_t body = chunk.size() - qccl::codec::kChunkHeaderBytes;
    if ((h.flags & qccl::codec::kFlagCrc32c) && h.payloadBytes <= body) {
      const uint8_t* payload = chunk.data() + qccl::codec::kChunkHeaderBytes;
      const uint32_t crc = qccl::codec::cpuKernels().crc32c(0, payload, size_t(h.payloadBytes));
      qccl::codec::putLittleEndian(chunk.data() + 28, crc, 4);
      decodeOnce(codec, chunk.data(), chunk.size(), count, mode);
    }
  } catch (const qccl::codec::CodecError&) {
    decodeOnce(codec, chunk.data(), chunk.size(), count, mode);
  }
  return 0;
}
