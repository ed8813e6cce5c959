// The launch layer of the device codec kernels: each kernel runs a tile body's phases with a
// barrier between them (codecs/device/cta.h); everything else lives in the bodies, which the
// tests run on the CPU (tests/unit/device_tile_test.cc).
#include <cuda_runtime.h>

#include <vector>

#include "codecs/codec_error.h"
#include "codecs/cuda/codec_kernels.h"
#include "codecs/device/decode_tile.h"
#include "codecs/device/elementwise.h"
#include "codecs/device/encode_tile.h"
#include "codecs/device/tile_dispatch.h"
#include "codecs/device/tile_plan.h"

namespace qccl::cuda {

namespace {

using namespace qccl::tile;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    codec::throwCodecError(codec::ErrorKind::CudaFailure, "cuda: %s: %s", what,
                           cudaGetErrorString(status));
  }
}

template <class Body, class Batch>
__global__ void __launch_bounds__(kTileThreads) tileKernel(const __grid_constant__ Batch batch) {
  extern __shared__ float shared[];
  const Cta cta{blockIdx.x, threadIdx.x, blockDim.x, shared};
  const int phases = Body::phases(batch);
  for (int phase = 0; phase < phases; ++phase) {
    Body::run(phase, batch, cta);
    __syncthreads();
  }
}

// One launch of Body over the batch's tiles, with the dynamic shared memory it asks for (raising
// the kernel's limit once when that is above the default 48 KiB).
template <class Body, class Batch>
void launch(const Batch& b, uint64_t tiles, cudaStream_t stream) {
  const size_t bytes = Body::sharedFloats(b) * sizeof(float);
  static const cudaError_t raised =
      cudaFuncSetAttribute(tileKernel<Body, Batch>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           int(encodeSharedFloats(kMaxTileElements, true, true) * sizeof(float)));
  check(raised, "cudaFuncSetAttribute");
  tileKernel<Body, Batch><<<dim3(unsigned(tiles)), dim3(kTileThreads), bytes, stream>>>(b);
  check(cudaGetLastError(), "codec kernel launch");
}

struct EncodeLaunch {
  const EncodeBatch& batch;
  uint64_t tiles;
  cudaStream_t stream;
  template <class Q>
  void operator()() const {
    if (batch.spec.stochastic) {
      launch<EncodeTile<Q, true>>(batch, tiles, stream);
    } else {
      launch<EncodeTile<Q, false>>(batch, tiles, stream);
    }
  }
};

struct DecodeLaunch {
  const DecodeBatch& batch;
  uint64_t tiles;
  cudaStream_t stream;
  template <class Q>
  void operator()() const {
    launch<DecodeTile<Q>>(batch, tiles, stream);
  }
};

__global__ void elementKernel(const ElementArgs args) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < args.count; i += stride) {
    elementAt(args, i);
  }
}

void elementwise(const ElementArgs& args, cudaStream_t stream) {
  if (args.count == 0) return;
  const uint64_t blocks = (args.count + 255) / 256;
  elementKernel<<<unsigned(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(args);
  check(cudaGetLastError(), "element kernel launch");
}

}  // namespace

void encode(const CodecLaunch& l, qcclDataType_t inputType, qcclDataType_t residualType,
            float residualDecay, const EncodeRequest* requests, size_t count, uint32_t* amaxWords) {
  if (count == 0) return;
  EncodeBatch proto{};
  proto.spec = l.spec;
  proto.inputType = inputType;
  proto.residualType = residualType;
  proto.residualDecay = residualDecay;
  proto.seed = l.seed;
  proto.rank = l.rank;
  proto.tileElements = tileElementsFor(l.spec);
  const bool nvfp4 = l.spec.format == codec::Format::NvFp4;
  std::vector<EncodeChunk> chunks(count);
  for (size_t i = 0; i < count; ++i) {
    const EncodeRequest& r = requests[i];
    chunks[i] = EncodeChunk{};
    chunks[i].place.count = r.count;
    chunks[i].input = r.input;
    chunks[i].residual = r.residual;
    chunks[i].out = r.out;
    chunks[i].offset = r.offset;
    chunks[i].call = r.call;
    chunks[i].amax = nvfp4 ? amaxWords + i : nullptr;
  }
  if (nvfp4) check(cudaMemsetAsync(amaxWords, 0, count * sizeof(uint32_t), l.stream), "memset");
  forEachBatch(
      proto, chunks, [&](const EncodeChunk&) { return inputType; },
      [&](const EncodeBatch& b, uint64_t tiles) {
        if (nvfp4) launch<AmaxTile>(b, tiles, l.stream);
        withTileFormat(l.spec.format, inputType, EncodeLaunch{b, tiles, l.stream});
      });
}

void decode(const CodecLaunch& l, qcclDataType_t outType, bool accumulate,
            const DecodeRequest* requests, size_t count, uint32_t* status, uint32_t* hostStatus) {
  if (count == 0) return;
  DecodeBatch proto{};
  proto.spec = l.spec;
  proto.outType = outType;
  proto.accumulate = accumulate;
  proto.tileElements = tileElementsFor(l.spec);
  proto.status = status;
  proto.hostStatus = hostStatus;
  std::vector<DecodeChunk> chunks(count);
  for (size_t i = 0; i < count; ++i) {
    chunks[i] = DecodeChunk{};
    chunks[i].place.count = requests[i].count;
    chunks[i].in = requests[i].in;
    chunks[i].out = requests[i].out;
    chunks[i].sourceType = requests[i].sourceType;
  }
  // The chunks of one source dtype at a time: it picks the body for format none.
  for (qcclDataType_t source : {qcclFloat32, qcclBfloat16, qcclFloat16}) {
    std::vector<DecodeChunk> same;
    for (const DecodeChunk& c : chunks) {
      if (c.sourceType == source) same.push_back(c);
    }
    forEachBatch(
        proto, same, [&](const DecodeChunk&) { return source; },
        [&](const DecodeBatch& b, uint64_t tiles) {
          withTileFormat(l.spec.format, source, DecodeLaunch{b, tiles, l.stream});
        });
  }
}

void toFloat32(const void* in, qcclDataType_t dtype, size_t count, float* out, cudaStream_t s) {
  elementwise({ElementOp::ToFloat32, in, out, dtype, 1.0f, count}, s);
}

void addToFloat32(const void* in, qcclDataType_t dtype, size_t count, float* acc, cudaStream_t s) {
  elementwise({ElementOp::AddToFloat32, in, acc, dtype, 1.0f, count}, s);
}

void divide(float* values, size_t count, float divisor, cudaStream_t s) {
  elementwise({ElementOp::Divide, values, values, qcclFloat32, divisor, count}, s);
}

void fromFloat32(const float* in, size_t count, qcclDataType_t dtype, void* out, cudaStream_t s) {
  elementwise({ElementOp::FromFloat32, in, out, dtype, 1.0f, count}, s);
}

}  // namespace qccl::cuda
