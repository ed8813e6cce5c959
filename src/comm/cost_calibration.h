// What the cost model (cost_model.h) is fed, measured on the running communicator: the link, by
// exchanges with every peer at once (as the collectives send), and this host's codec and reduction
// throughput, by timing the CPU kernels on one pipeline segment. Each measurement is a collective
// step: every rank makes it at the same call, and the ranks then agree on the slowest figures, so
// that every rank feeds the model the same numbers and makes the same decisions.
#pragma once

#include "codecs/codec_spec.h"
#include "collectives/context.h"
#include "src/comm/cost_model.h"

namespace qccl {

// The link curve, each point the median of several exchanges: a few ms on a fast link, about
// 0.3 s at 1 Gbit/s (about 34 MiB out per rank in all, whatever the rank count).
LinkCurve measureLink(coll::Context& context);

// This host's encode (with error feedback), decode-accumulate, reduce and copy rates for `codec`
// on `segmentElements` elements (0: 2^18), the median of three timings each.
HostRates measureHostRates(const codec::CodecSpec& codec, size_t segmentElements);

// Every rank's figures in, the same figures out on every rank: the longest time at each point of
// each link curve, the lowest of each host rate. `codec` must be the same on every rank
// (qcclInvalidUsage otherwise).
void agreeOnCosts(coll::Context& context, const codec::CodecSpec& codec, CostInputs& in);

}  // namespace qccl
