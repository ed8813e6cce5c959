// A communicator's settings, resolved once at init: qcclConfig_t field > QCCL_* environment >
// default (docs/ENV.md).
#pragma once

#include <chrono>
#include <string>

#include "codecs/codec_spec.h"
#include "collectives/collectives.h"
#include "qccl/qccl.h"
#include "src/comm/collective_kind.h"
#include "src/transport/transport_kind.h"

namespace qccl {

struct Settings {
  codec::CodecSpec codec;
  transport::TransportKind transport = transport::TransportKind::Auto;
  coll::AllreduceAlgorithm algorithm = coll::AllreduceAlgorithm::Sra;
  size_t minBytes = 0;
  bool minBytesAuto = false;  // the cost model decides (auto_min_bytes.h); minBytes unused
  uint32_t compressedCollectives = kAllCollectives;  // QCCL_OPS
  bool compressOneRank = false;  // QCCL_COMPRESS_ONE_RANK: the codec path with nothing to send
  bool errorFeedback = true;
  qcclDataType_t efDtype = qcclFloat32;
  float efDecay = 1.0f;  // QCCL_EF_DECAY: the residuals' decay (docs/ERROR_FEEDBACK.md)
  std::chrono::milliseconds timeout{0};
  int groupSize = 0;           // hier; 0: ranks per host
  size_t segmentElements = 0;  // pipelining of compressed collectives; 0: none
};

// Throws Error(qcclInvalidArgument) naming the bad field or variable.
Settings resolveSettings(const qcclConfig_t* config);

}  // namespace qccl
