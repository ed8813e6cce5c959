#include "src/comm/auto_min_bytes.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "collectives/allreduce_impl.h"
#include "src/comm/cost_calibration.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

// The probes' bytes are not the application's: qcclCommWireBytes does not count them.
struct WireUncounted {
  explicit WireUncounted(coll::Context& c) : context(c), saved(c.wire) { c.wire = nullptr; }
  ~WireUncounted() { context.wire = saved; }
  coll::Context& context;
  coll::WireCounters* saved;
};

int usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(CPU_COUNT(&set), 1);
  return int(std::max(std::thread::hardware_concurrency(), 1u));
}

// The link curve measured by the ranks of `group` (a subgroup of the context's) among themselves.
LinkCurve measureLinkOf(coll::Context& context, const coll::Group& group) {
  const coll::Group whole = context.group;
  context.group = group;
  const LinkCurve link = measureLink(context);
  context.group = whole;
  return link;
}

std::string describeCurve(const LinkCurve& link) {
  std::string text;
  for (size_t k = 0; k < LinkCurve::kPoints; ++k) {
    text += " " + std::to_string(LinkCurve::probeBytes(link.nranks, k)) + " B " +
            std::to_string(int(link.seconds[k] * 1e6)) + " us;";
  }
  return text;
}

void logInputs(const std::string& codec, const CostInputs& in) {
  QCCL_INFO(kLogColl,
            "cost model for %s: exchanges%s link %.1f MB/s; per element (%d cores here) encode "
            "%.2f ns, decode %.2f ns, reduce %.2f ns, copy %.2f ns",
            codec.c_str(), describeCurve(in.link).c_str(), in.link.bytesPerSecond() / 1e6,
            usableCores(), 1e9 / in.rates.encode, 1e9 / in.rates.decode, 1e9 / in.rates.reduce,
            1e9 / in.rates.copy);
  if (in.groupSize > 0) {
    QCCL_INFO(kLogColl, "cost model, hier groups of %d: inside%s across%s", in.groupSize,
              describeCurve(in.groupLink).c_str(), describeCurve(in.acrossLink).c_str());
  }
}

}  // namespace

CostInputs AutoMinBytes::shape(const coll::Context& context) const {
  CostInputs in;
  in.nranks = context.group.size();
  in.segmentElements = context.segmentElements;
  in.algorithm = algorithm_;
  in.groupSize = algorithm_ == coll::AllreduceAlgorithm::Hier ? groupSize_ : 0;
  return in;
}

void AutoMinBytes::measure(coll::Context& context, const std::string& codec) {
  WireUncounted uncounted(context);
  CostInputs in = shape(context);
  if (link_) {
    in.link = *link_;
    in.groupLink = groupLink_;
    in.acrossLink = acrossLink_;
  } else {
    in.link = measureLink(context);
    if (in.groupSize > 0) {
      const coll::HierGroups groups = coll::hierGroups(context.group, in.groupSize);
      in.groupLink = measureLinkOf(context, groups.inside);
      in.acrossLink = measureLinkOf(context, groups.across);
    }
  }
  // The kernels are timed alone on a core; in a call, the ranks of a host share its cores.
  const double share = std::min(1.0, double(usableCores()) / double(std::max(ranksOnHost_, 1)));
  in.rates = measureHostRates(context.codec, context.segmentElements);
  for (double* r : {&in.rates.encode, &in.rates.decode, &in.rates.reduce, &in.rates.copy}) {
    *r *= share;
  }
  agreeOnCosts(context, context.codec, in);
  if (!context.usageError.empty()) {
    throwError(qcclInvalidUsage,
               "QCCL_MIN_BYTES=auto: measuring the link: %s (every rank must use auto)",
               context.usageError.c_str());
  }
  logInputs(codec, in);
  link_ = in.link;
  groupLink_ = in.groupLink;
  acrossLink_ = in.acrossLink;
  rates_[codec] = in.rates;
}

CostInputs AutoMinBytes::inputs(coll::Context& context) {
  const std::string codec = codec::codecName(context.codec);
  if (rates_.count(codec) == 0) measure(context, codec);
  CostInputs in = shape(context);
  in.link = *link_;
  in.groupLink = groupLink_;
  in.acrossLink = acrossLink_;
  in.rates = rates_.at(codec);
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
