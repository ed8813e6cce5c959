// The allreduce variants behind coll::allreduce (allreduce.cc picks one). A disagreement between
// the ranks is recorded in the context, not thrown: every phase still runs (so the peers learn of
// it), the output is left untouched, and the caller throws.
#pragma once

#include "collectives/call_agreement.h"
#include "collectives/collectives.h"
#include "collectives/partition.h"
#include "collectives/reduction.h"

namespace qccl::coll {

void allreduceExact(Context& context, const ReduceArgs& args);
// Up to this many bytes per rank on the wire, the round saved outweighs the extra bytes (n - 1
// whole vectors instead of two rounds of 1/n of one each). On the emulated cluster (4 ranks,
// before recursive doubling below took their small calls; medians of three runs) a 4 KiB call,
// 12 KiB in one round, took 101 us against 194 us in two; at 8 KiB (24 KiB) the two were within
// the runs' spread (198 and 186 us): docs/PERFORMANCE.md.
constexpr size_t kOneRoundWireBytes = 16 << 10;

// Whether an exact allreduce of `bytes` bytes on n ranks runs in one round (every rank sends its
// whole vector to everyone) rather than two (scatter-reduce, allgather): the same sums in the
// same order either way, so only the time and the bytes on the wire differ.
inline bool exactAllreduceInOneRound(size_t bytes, int n) {
  return size_t(n - 1) * bytes <= kOneRoundWireBytes;
}
// Small calls on a power-of-two number of ranks go by recursive doubling instead
// (allreduce_doubling.cc): log2 n messages per rank in log2 n rounds where the one round sends
// n - 1, when the dtype accumulates in its own type (integers, fp32, fp64: a partial result
// travels as it is) and log2 n whole vectors are at most this many bytes. On the emulated cluster
// (4 ranks on 2 cores) the kernel's cost per message decides at 4 KiB: doubling took 68-81 us
// against 114-146 in one round. At 8 KiB it took 138-155 us at 1 Gbit/s but 278 at 500 Mbit/s,
// where its 16 KiB on the wire cost more than the halving below saves (155-175 and 213 us):
// docs/PERFORMANCE.md.
constexpr size_t kDoublingWireBytes = 8 << 10;
inline bool isPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }
inline size_t doublingRounds(int n) {  // log2 n, rounded up
  size_t rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}
inline bool exactAllreduceByDoubling(size_t count, qcclDataType_t dtype, int n) {
  return n >= 2 && isPowerOfTwo(n) && accumulatesInOwnType(dtype) &&
         doublingRounds(n) * count * dataTypeSize(dtype) <= kDoublingWireBytes;
}
void allreduceExactDoubling(Context& context, const ReduceArgs& args);
// Larger ones, up to this many bytes, by recursive halving then doubling (allreduce_doubling.cc):
// 2 log2 n messages per rank where the two rounds send 2 (n - 1), the same bytes: at 12 KiB
// 152-160 us against 195-245 in two rounds; from 16 KiB both are at the link's rate.
constexpr size_t kHalvingBytes = 64 << 10;
inline bool exactAllreduceByHalving(size_t count, qcclDataType_t dtype, int n) {
  return n >= 2 && isPowerOfTwo(n) && accumulatesInOwnType(dtype) &&
         !exactAllreduceByDoubling(count, dtype, n) && count * dataTypeSize(dtype) <= kHalvingBytes;
}
void allreduceExactHalving(Context& context, const ReduceArgs& args);
// The spans rank `me` holds in recursive halving: the whole vector, then after each round the
// half it kept (the lower rank of a pair the lower half, which is the shorter one).
std::vector<Span> halvingSpans(size_t count, int n, int me);

// After a disagreement found in a call's first round: a second round with every peer, poison
// out, whatever comes in (`inBytes` expected) counted and dropped, so that a peer on the
// two-round path, or one that found the disagreement in its own first round, is not left
// waiting for this rank. Every allreduce path runs it then, whatever path its peers took.
void poisonSecondRound(Context& context, size_t inBytes);
// The call agreement of the pipelined allreduces (call_agreement.h); when it fails, the second
// round above too.
bool agreeOnAllreduce(Context& context, const CallShape& call);

// Compressed, float dtypes, Sum or Avg.
void allreduceSra(Context& context, const ReduceArgs& args);
void allreduceRing(Context& context, const ReduceArgs& args);
void allreduceHier(Context& context, const ReduceArgs& args, int groupSize);
void allreduceGather(Context& context, const ReduceArgs& args);

// hier's subgroups of `whole` (groupSize must divide its size): this rank's group of groupSize
// consecutive ranks, and the ranks at this rank's place in every group.
struct HierGroups {
  Group inside;
  Group across;
};
HierGroups hierGroups(const Group& whole, int groupSize);

}  // namespace qccl::coll
