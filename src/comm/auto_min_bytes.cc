#include "src/comm/auto_min_bytes.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "src/comm/cost_calibration.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

int usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(CPU_COUNT(&set), 1);
  return int(std::max(std::thread::hardware_concurrency(), 1u));
}

// The probes' bytes are not the application's: qcclCommWireBytes does not count them.
struct WireUncounted {
  explicit WireUncounted(coll::Context& c) : context(c), saved(c.wire) { c.wire = nullptr; }
  ~WireUncounted() { context.wire = saved; }
  coll::Context& context;
  coll::WireCounters* saved;
};

}  // namespace

CostInputs AutoMinBytes::inputs(coll::Context& context) {
  const std::string name = codec::codecName(context.codec);
  CostInputs in;
  in.nranks = context.group.size();
  in.segmentElements = context.segmentElements;
  auto known = rates_.find(name);
  if (known != rates_.end() && link_) {
    in.link = *link_;
    in.rates = known->second;
    return in;
  }
  WireUncounted uncounted(context);
  LinkCurve link = link_ ? *link_ : measureLink(context);
  // The kernels are timed alone on a core; in a call, the ranks of a host share its cores.
  const double share = std::min(1.0, double(usableCores()) / double(std::max(ranksOnHost_, 1)));
  HostRates rates = measureHostRates(context.codec, context.segmentElements);
  for (double* r : {&rates.encode, &rates.decode, &rates.reduce, &rates.copy}) *r *= share;
  agreeOnCosts(context, context.codec, link, rates);
  if (!context.usageError.empty()) {
    throwError(qcclInvalidUsage,
               "QCCL_MIN_BYTES=auto: measuring the link: %s (every rank must use auto)",
               context.usageError.c_str());
  }
  std::string curve;
  for (size_t k = 0; k < LinkCurve::kPoints; ++k) {
    curve += " " + std::to_string(LinkCurve::probeBytes(link.nranks, k)) + " B " +
             std::to_string(int(link.seconds[k] * 1e6)) + " us;";
  }
  QCCL_INFO(kLogColl,
            "cost model for %s: exchanges%s link %.1f MB/s; per element (%d ranks on %d cores "
            "here) encode %.2f ns, decode %.2f ns, reduce %.2f ns, copy %.2f ns",
            name.c_str(), curve.c_str(), link.bytesPerSecond() / 1e6, ranksOnHost_, usableCores(),
            1e9 / rates.encode, 1e9 / rates.decode, 1e9 / rates.reduce, 1e9 / rates.copy);
  link_ = link;
  rates_[name] = rates;
  in.link = link;
  in.rates = rates;
  return in;
}

size_t AutoMinBytes::threshold(coll::Context& context, CollectiveKind kind, qcclDataType_t dtype) {
  if (context.group.size() == 1) return 0;  // nothing travels: QCCL_COMPRESS_ONE_RANK decides
  const auto key = std::make_tuple(codec::codecName(context.codec), kind, dtype);
  auto known = thresholds_.find(key);
  if (known != thresholds_.end()) return known->second;
  const size_t bytes =
      std::max(kAutoMinBytesFloor, crossoverBytes(inputs(context), kind, dtype, context.codec));
  if (bytes == SIZE_MAX) {
    QCCL_WARN(
        "QCCL_MIN_BYTES=auto: %s %s is predicted slower than exact at every size on this "
        "communicator's link; those calls go exact (set QCCL_MIN_BYTES to a size to force)",
        std::get<0>(key).c_str(), collectiveName(kind));
  } else {
    QCCL_INFO(kLogColl, "QCCL_MIN_BYTES=auto: %s %s compressed from %zu bytes",
              std::get<0>(key).c_str(), collectiveName(kind), bytes);
  }
  thresholds_.emplace(key, bytes);
  return bytes;
}

}  // namespace qccl
