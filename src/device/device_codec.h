// The codec API (qccl_codec.h) on device buffers: the CUDA kernels on the caller's stream.
// Arguments are checked as the host path checks them, before anything is enqueued.
#pragma once

#include "codecs/codec.h"

namespace qccl::device {

// Enqueued on `stream`; returns at once. A CRC32C is not computed on a GPU (qcclInvalidUsage).
void encodeOnDevice(const codec::CodecSpec& spec, const void* input, size_t count,
                    qcclDataType_t dtype, void* output, size_t outputBytes,
                    const codec::EncodeParams& params, cudaStream_t stream);
// Waits for `stream` to read the chunk's header, so that a chunk that does not match fails
// (qcclInvalidUsage) before anything is decoded; the decode itself is enqueued.
void decodeOnDevice(const codec::CodecSpec& spec, const void* input, size_t inputBytes,
                    void* output, size_t count, qcclDataType_t dtype, bool accumulate,
                    cudaStream_t stream);

}  // namespace qccl::device
