#include "codecs/dense_sections.h"

#include <cstring>
#include <vector>

namespace qccl::codec {

namespace {

float* scratchFor(const CodecSpec& spec) {
  thread_local std::vector<float> scratch;
  const size_t need = kernelScratchFloats(spec);
  if (scratch.size() < need) scratch.resize(need);
  return scratch.data();
}

}  // namespace

float encodeSections(const CodecSpec& spec, const ChunkLayout& layout, const void* input,
                     qcclDataType_t dtype, uint8_t* chunk, const EncodeParams& params,
                     const KernelTable& kernels) {
  std::memset(chunk + layout.scalesOffset, 0, layout.scalesBytes);
  if (layout.elementsBytes) {
    std::memset(chunk + layout.elementsOffset + layout.elementsBytes - kSectionAlign, 0,
                kSectionAlign);
  }
  EncodeJob job{};
  job.spec = spec;
  job.input = input;
  job.inputType = dtype;
  job.count = layout.count;
  job.paddedCount = layout.paddedCount;
  job.scales = chunk + layout.scalesOffset;
  job.elements = chunk + layout.elementsOffset;
  job.seed = params.seed;
  job.rank = params.rank;
  job.call = params.call;
  job.offset = params.offset;
  job.residual = params.residual;
  job.residualType = params.residualType;
  job.residualDecay = params.residualDecay;
  job.scratch = scratchFor(spec);
  return kernels.encode(job);
}

void decodeSections(const CodecSpec& spec, const ChunkLayout& layout, qcclDataType_t sourceType,
                    const uint8_t* chunk, float chunkScale, uint64_t seed, void* output,
                    qcclDataType_t outputType, bool accumulate, const KernelTable& kernels) {
  DecodeJob job{};
  job.spec = spec;
  job.sourceType = sourceType;
  job.scales = chunk + layout.scalesOffset;
  job.elements = chunk + layout.elementsOffset;
  job.count = layout.count;
  job.paddedCount = layout.paddedCount;
  job.chunkScale = chunkScale;
  job.seed = seed;
  job.output = output;
  job.outputType = outputType;
  job.accumulate = accumulate;
  job.scratch = scratchFor(spec);
  kernels.decode(job);
}

}  // namespace qccl::codec
