/*
 * qccl codec API: the wire encodings of qccl, usable on their own (checkpoint or activation
 * compression) and the way tests reach the codecs. docs/CODECS.md defines every format and
 * the byte layout of an encoded chunk.
 */
#ifndef QCCL_QCCL_CODEC_H_
#define QCCL_QCCL_CODEC_H_

#include "qccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed codec spec. Plain value: copy it freely; only qcclCodecParse fills it. */
typedef struct {
  uint64_t opaque[2];
} qcclCodec_t;

/* Encode options. Append-only: set size = sizeof(qcclEncodeOptions_t) or start from
 * QCCL_ENCODE_OPTIONS_INITIALIZER. NULL options mean the initializer's values. */
typedef struct {
  size_t size;
  /* Seeds the Hadamard signs (+rht: every rank must use the same seed) and keys the
   * stochastic-rounding stream (+sr). */
  uint64_t seed;
  /* Stochastic rounding draws element i's bits from Philox4x32-10 keyed by seed at counter
   * (offset + i, rank, call): distinct (rank, call, offset) give independent roundings. */
  uint32_t rank;
  uint32_t call;
  uint64_t offset;
  /* Error feedback: when non-NULL, encodes p = x + residual and stores residual = p - D(Q(p))
   * in place (count elements of residualType: qcclFloat32 or qcclBfloat16). Elements of a
   * non-finite block keep their residual. */
  void* residual;
  qcclDataType_t residualType;
  /* QCCL_ENCODE_* bits. */
  uint32_t flags;
  /* Error-feedback decay beta in [0, 1]: encodes p = x + (beta * residual), two fp32 roundings
   * (no fused multiply-add), then residual = p - D(Q(p)) as above. 1 (the initializer's) is plain
   * error feedback; 0 reads no residual, so the chunk is the one encoded without error feedback
   * (docs/ERROR_FEEDBACK.md, "Decay"). */
  float residualDecay;
} qcclEncodeOptions_t;

/* Store a CRC32C of the payload in the chunk header; decoding then verifies it. */
#define QCCL_ENCODE_CRC32C 0x1u

#define QCCL_ENCODE_OPTIONS_INITIALIZER \
  { sizeof(qcclEncodeOptions_t), 0, 0, 0, 0, NULL, qcclFloat32, 0, 1.0f }

/* Parses "FORMAT[+sr][+rht[R]][/bN]", e.g. "fp8e4m3", "mxfp4+sr", "nvfp4+rht", "int4/b64".
 * Formats: none bf16 fp16 fp8e4m3 fp8e5m2 mxfp8 mxfp4 nvfp4 fp4ue5m3 int8 int4 int2 sign1. */
qcclResult_t qcclCodecParse(const char* spec, qcclCodec_t* codec);

/* Writes the canonical spec (defaults omitted) and its terminating NUL into name. */
qcclResult_t qcclCodecName(qcclCodec_t codec, char* name, size_t nameSize);

/* Exact size of the chunk qcclEncode writes for count elements of dtype. */
qcclResult_t qcclCodecEncodedSize(qcclCodec_t codec, size_t count, qcclDataType_t dtype,
                                  size_t* bytes);

/* Encodes count elements of dtype (qcclFloat32, qcclBfloat16, qcclFloat16) into one chunk of
 * qcclCodecEncodedSize bytes. outputBytes is the room at output. Host buffers take a NULL stream;
 * device buffers (all of them on the GPU, the residual too) are encoded on `stream`, the call
 * returning at once, into the same bytes (no CRC32C on the device). */
qcclResult_t qcclEncode(qcclCodec_t codec, const void* input, size_t count, qcclDataType_t dtype,
                        void* output, size_t outputBytes, const qcclEncodeOptions_t* options,
                        cudaStream_t stream);

/* Decodes one chunk into count elements of dtype (qcclFloat32, qcclBfloat16, qcclFloat16).
 * A chunk made by another codec, for another count, truncated or corrupted fails with
 * qcclInvalidUsage and leaves output untouched. Device buffers: decoded on `stream`, after the
 * call waited for the stream to read the chunk's header (a chunk carrying a CRC32C is refused
 * there). */
qcclResult_t qcclDecode(qcclCodec_t codec, const void* input, size_t inputBytes, void* output,
                        size_t count, qcclDataType_t dtype, cudaStream_t stream);

/* Like qcclDecode, but adds the decoded values into the fp32 buffer accum. */
qcclResult_t qcclDecodeAccumulate(qcclCodec_t codec, const void* input, size_t inputBytes,
                                  float* accum, size_t count, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* QCCL_QCCL_CODEC_H_ */
