// The cost model (docs/PERFORMANCE.md, "The cost model"): a call's time on a communicator,
// exact and compressed, predicted from what was measured on it (cost_calibration.h) — how long an
// exchange with every peer at once takes at a few sizes, and this host's codec and reduction
// throughput — and the bytes the call puts on the wire, counted from the codec's chunk layout as
// the collectives send it. Pure: the same inputs give the same answers on every rank, so ranks
// that agree on the inputs agree on every decision made from them.
#pragma once

#include <cstddef>

#include "codecs/codec_spec.h"
#include "collectives/collectives.h"
#include "qccl/qccl.h"
#include "src/comm/collective_kind.h"

namespace qccl {

// Seconds for one exchange of a message with every peer at once, measured at a few sizes (latency,
// protocol switches, a switch's burst allowance and the link's rate all show in the curve).
struct LinkCurve {
  static constexpr size_t kPoints = 6;
  // The sizes measured: 8 B to 4 MiB per peer, the larger ones capped so that one rank sends at
  // most 8 MiB in one exchange (long enough for TCP to reach the link's rate).
  static size_t probeBytes(int nranks, size_t point);
  int nranks = 2;
  double seconds[kPoints] = {};
  // Between the points, linear; past the last one, at bytesPerSecond().
  double exchangeSeconds(size_t bytesPerPeer) const;
  // Bytes one rank sends per second to its peers together, from the first and last points.
  double bytesPerSecond() const;
};

// Elements per second on one of this host's cores.
struct HostRates {
  double encode = 0;  // codec encode of fp32 input with an fp32 error-feedback residual
  double decode = 0;  // codec decode-accumulate into fp32
  double reduce = 0;  // exact: fp32 accumulate of a received contribution
  double copy = 0;    // exact: fp32 copies (framing and results)
};

struct CostInputs {
  int nranks = 1;
  LinkCurve link;
  HostRates rates;
  size_t segmentElements = 0;  // QCCL_SEGMENT_BYTES / 4; 0: not pipelined
  coll::AllreduceAlgorithm algorithm = coll::AllreduceAlgorithm::Sra;  // compressed allreduces
  // hier: ranks per group, and exchanges inside a group and among the ranks that hold the same
  // slice in every group (the link curves of those subgroups).
  int groupSize = 0;
  LinkCurve groupLink;
  LinkCurve acrossLink;
};

struct Prediction {
  double seconds = 0;      // the whole call
  double wireSeconds = 0;  // its exchanges, as the link curve has them
  double cpuSeconds = 0;   // its codec or reduction work
  size_t wireBytes = 0;    // sent by the busiest rank, headers included
};

// count: the collective's count as the API takes it (allreduce: the vector; reduce-scatter:
// recvcount; allgather: sendcount); dtype: the caller's (fp32, bf16, fp16).
Prediction predictExact(const CostInputs& in, CollectiveKind kind, size_t count,
                        qcclDataType_t dtype);
Prediction predictCompressed(const CostInputs& in, CollectiveKind kind, size_t count,
                             qcclDataType_t dtype, const codec::CodecSpec& codec);

// The algorithm a compressed allreduce runs with the configured one: for a topk codec, gather
// where its busiest rank sends no more bytes than sra's (two ranks), so that the sparse
// contributions are summed without the owner's second sparsification (docs/ALGORITHMS.md).
// Depends on the call's shape only, so every rank picks the same.
coll::AllreduceAlgorithm compressedAllreduceAlgorithm(coll::AllreduceAlgorithm configured,
                                                      int nranks, size_t segmentElements,
                                                      size_t count, qcclDataType_t dtype,
                                                      const codec::CodecSpec& codec);

// The smallest call, in bytes of its larger buffer (what QCCL_MIN_BYTES compares), from which the
// compressed path is predicted at least 10% faster than the exact one at every larger size up to
// 2^40 bytes; SIZE_MAX when it never is.
size_t crossoverBytes(const CostInputs& in, CollectiveKind kind, qcclDataType_t dtype,
                      const codec::CodecSpec& codec);

}  // namespace qccl
