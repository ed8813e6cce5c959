#include "src/comm/settings.h"

#include <cstdlib>
#include <cstring>

#include "codecs/codec.h"
#include "codecs/codec_error.h"
#include "src/common/error.h"
#include "src/common/params.h"

namespace qccl {

namespace {

std::string pick(const char* field, const Param& p) {
  return field != nullptr ? std::string(field) : paramString(p);
}

coll::AllreduceAlgorithm parseAlgorithm(const std::string& name) {
  if (name == "sra") return coll::AllreduceAlgorithm::Sra;
  if (name == "ring") return coll::AllreduceAlgorithm::Ring;
  if (name == "hier") return coll::AllreduceAlgorithm::Hier;
  if (name == "gather") return coll::AllreduceAlgorithm::Gather;
  throwError(qcclInvalidArgument, "algorithm '%s' is not one of sra, ring, hier, gather",
             name.c_str());
}

qcclDataType_t parseEfDtype(const std::string& name) {
  if (name == "fp32") return qcclFloat32;
  if (name == "bf16") return qcclBfloat16;
  throwError(qcclInvalidArgument, "QCCL_EF_DTYPE=%s is not fp32 or bf16", name.c_str());
}

float parseEfDecay(const std::string& text) {
  char* end = nullptr;
  const float decay = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !codec::validResidualDecay(decay)) {
    throwError(qcclInvalidArgument, "QCCL_EF_DECAY=%s is not a number in [0, 1]", text.c_str());
  }
  return decay;
}

}  // namespace

Settings resolveSettings(const qcclConfig_t* config) {
  qcclConfig_t c = QCCL_CONFIG_INITIALIZER;
  if (config != nullptr) {
    if (config->magic != QCCL_CONFIG_MAGIC || config->size < offsetof(qcclConfig_t, codec) ||
        config->size > sizeof c) {
      throwError(qcclInvalidArgument,
                 "config was not set up from QCCL_CONFIG_INITIALIZER (size %zu, magic 0x%x)",
                 config->size, config->magic);
    }
    std::memcpy(&c, config, config->size);  // fields a smaller (older) struct lacks stay undefined
  }
  Settings s;
  const std::string codecText = pick(c.codec, params::kCodec);
  try {
    s.codec = codec::parseCodecSpec(codecText);
  } catch (const codec::CodecError& e) {
    throwError(qcclInvalidArgument, "%s", e.what());
  }
  s.transport = transport::parseTransportKind(pick(c.transport, params::kTransport));
  s.algorithm = parseAlgorithm(pick(c.algorithm, params::kAlgo));
  if (c.minBytes == QCCL_MIN_BYTES_AUTO ||
      (c.minBytes == QCCL_CONFIG_UNDEF_SIZE && paramString(params::kMinBytes) == "auto")) {
    s.minBytesAuto = true;
  } else {
    const int64_t minBytes =
        c.minBytes != QCCL_CONFIG_UNDEF_SIZE ? int64_t(c.minBytes) : paramInt(params::kMinBytes);
    if (minBytes < 0)
      throwError(qcclInvalidArgument, "minimum bytes %lld is negative", (long long)minBytes);
    s.minBytes = size_t(minBytes);
  }
  s.compressedCollectives = parseCollectiveSet(paramString(params::kOps));
  s.compressOneRank = paramInt(params::kCompressOneRank) != 0;
  s.errorFeedback = (c.errorFeedback != QCCL_CONFIG_UNDEF_INT ? c.errorFeedback
                                                              : int(paramInt(params::kEf))) != 0;
  if (c.efDtype != QCCL_CONFIG_UNDEF_INT) {
    if (c.efDtype != qcclFloat32 && c.efDtype != qcclBfloat16) {
      throwError(qcclInvalidArgument, "config efDtype %d is not qcclFloat32 or qcclBfloat16",
                 c.efDtype);
    }
    s.efDtype = static_cast<qcclDataType_t>(c.efDtype);
  } else {
    s.efDtype = parseEfDtype(paramString(params::kEfDtype));
  }
  if (c.efDecay != QCCL_CONFIG_UNDEF_FLOAT) {
    if (!codec::validResidualDecay(c.efDecay)) {
      throwError(qcclInvalidArgument, "config efDecay %g is not in [0, 1]", double(c.efDecay));
    }
    s.efDecay = c.efDecay;
  } else {
    s.efDecay = parseEfDecay(paramString(params::kEfDecay));
  }
  const int64_t timeoutMs = c.timeoutMs != QCCL_CONFIG_UNDEF_INT
                                ? int64_t(c.timeoutMs)
                                : paramInt(params::kTimeout) * 1000;
  if (timeoutMs <= 0) throwError(qcclInvalidArgument, "timeout must be positive");
  s.timeout = std::chrono::milliseconds(timeoutMs);
  s.groupSize =
      c.groupSize != QCCL_CONFIG_UNDEF_INT ? c.groupSize : int(paramInt(params::kGroupSize));
  if (s.groupSize < 0) throwError(qcclInvalidArgument, "group size %d is negative", s.groupSize);
  const int64_t segmentBytes = paramInt(params::kSegmentBytes);
  if (segmentBytes < 0) {
    throwError(qcclInvalidArgument, "QCCL_SEGMENT_BYTES %lld is negative", (long long)segmentBytes);
  }
  s.segmentElements = size_t(segmentBytes) / sizeof(float);
  return s;
}

}  // namespace qccl
