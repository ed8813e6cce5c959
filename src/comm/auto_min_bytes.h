// QCCL_MIN_BYTES=auto (the default): per communicator, the size from which each kind of call is
// compressed, from the cost model (cost_model.h) fed with figures measured on the communicator
// itself at the first call that needs them (cost_calibration.h). Every rank reaches that call
// together and agrees on the figures, so every rank derives the same thresholds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "collectives/context.h"
#include "src/comm/collective_kind.h"
#include "src/comm/cost_model.h"

namespace qccl {

// Calls below this (the fixed default before auto) stay exact whatever the model says. Their few
// KiB per peer pass at once where the link has slack (the emulated cluster's token bucket lets
// 256 KB through at the veth's speed), while compression adds an exchange (the call agreement);
// the model measures the link back to back and cannot see that slack: on the emulated cluster at
// 250 Mbit/s it chose compressed 32 KiB reduce-scatters and allgathers that ran 1.35-1.7x slower
// than exact ones (docs/PERFORMANCE.md).
constexpr size_t kAutoMinBytesFloor = 64 << 10;

// Device buffers over NCCL: the model has no measured GPU codec figures yet (docs/PERFORMANCE.md),
// so auto is this fixed size there.
constexpr size_t kStreamAutoMinBytes = 65536;

class AutoMinBytes {
 public:
  // ranksOnHost: the communicator's ranks on this host, which share its cores; algorithm and
  // groupSize: what its compressed allreduces run (call_plan.h's allreduceAlgorithm).
  AutoMinBytes() = default;
  AutoMinBytes(int ranksOnHost, coll::AllreduceAlgorithm algorithm, int groupSize)
      : ranksOnHost_(ranksOnHost), algorithm_(algorithm), groupSize_(groupSize) {}

  // The threshold for calls of this kind and dtype with the context's codec; the first call of
  // a codec on the communicator measures (a collective step: its context must be a host one).
  size_t threshold(coll::Context& context, CollectiveKind kind, qcclDataType_t dtype);
  // The model's inputs for the context's codec (measured on first use, like threshold).
  CostInputs inputs(coll::Context& context);

 private:
  CostInputs shape(const coll::Context& context) const;  // all but what is measured
  void measure(coll::Context& context, const std::string& codec);

  int ranksOnHost_ = 1;
  coll::AllreduceAlgorithm algorithm_ = coll::AllreduceAlgorithm::Sra;
  int groupSize_ = 0;
  std::optional<LinkCurve> link_;
  LinkCurve groupLink_, acrossLink_;        // hier only
  std::map<std::string, HostRates> rates_;  // by codec name
  std::map<std::tuple<std::string, CollectiveKind, qcclDataType_t>, size_t> thresholds_;
};

}  // namespace qccl
