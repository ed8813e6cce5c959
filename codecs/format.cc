#include "codecs/format.h"

namespace qccl::codec {

namespace {
// Indexed by Format.
constexpr FormatInfo kFormats[kFormatCount] = {
    {"none", 0, 0, 0, false, false},     {"bf16", 16, 0, 0, false, true},
    {"fp16", 16, 0, 0, false, true},     {"fp8e4m3", 8, 4, 128, false, true},
    {"fp8e5m2", 8, 4, 128, false, true}, {"mxfp8", 8, 1, 32, true, true},
    {"mxfp4", 4, 1, 32, true, true},     {"nvfp4", 4, 1, 16, true, true},
    {"fp4ue5m3", 4, 1, 16, false, true}, {"int8", 8, 4, 128, false, true},
    {"int4", 4, 4, 64, false, true},     {"sign1", 1, 4, 2048, false, false},
    {"int2", 2, 4, 128, false, false},   {"topk", 0, 0, 4096, false, false},
};
}  // namespace

const FormatInfo& formatInfo(Format format) { return kFormats[static_cast<int>(format)]; }

bool isBlockScaled(Format format) { return formatInfo(format).scaleBytes != 0; }

}  // namespace qccl::codec
