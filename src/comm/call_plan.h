// The per-call policy, decided in one place for every entry point (the C API on host or device
// buffers, and the layers built on it): whether a call is compressed and why not, with which
// codec, under which error-feedback key, by which algorithm (docs/ALGORITHMS.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec_spec.h"
#include "collectives/collectives.h"
#include "qccl/qccl.h"
#include "src/comm/collective_kind.h"
#include "src/comm/settings.h"

namespace qccl {

struct ReductionCall {
  CollectiveKind kind;
  const void* send;
  void* recv;
  size_t count;  // allreduce: the vector; reduce-scatter: recvcount; allgather: sendcount
  qcclDataType_t dtype;
  qcclRedOp_t op;  // ignored for allgather
  cudaStream_t stream;
  const qcclCallConfig_t* config;  // may be NULL
};

// Why a call goes exact (None: it is compressed).
enum class ExactReason {
  None,
  CodecNone,          // the codec is "none"
  CallFlag,           // QCCL_CALL_EXACT
  OpNotEnabled,       // QCCL_OPS leaves this collective out
  Dtype,              // only fp32, bf16 and fp16 are compressed
  Op,                 // only Sum and Avg are compressed (Max, Min, Prod stay exact)
  BelowMinBytes,      // smaller than QCCL_MIN_BYTES
  ModelPrefersExact,  // QCCL_MIN_BYTES=auto: the cost model predicts exact faster at this size
  SingleRank,         // nothing travels
};

const char* describe(ExactReason reason);

// qccl's bitwise reductions (qcclBitwiseAnd, Or, Xor).
bool isBitwiseOp(qcclRedOp_t op);
// Throws Error(qcclInvalidArgument) for an op that is not one, or a bitwise op on a float dtype.
void checkOp(qcclRedOp_t op, qcclDataType_t dtype);

// The dtypes a call may be compressed from: fp32, bf16, fp16.
bool compressibleDtype(qcclDataType_t dtype);

// What the communicator brings to the decision.
struct CommShape {
  int nranks;
  int hierGroupSize;  // 0: ranks do not split into even groups
};

struct CallPlan {
  ExactReason exactReason = ExactReason::None;
  bool compressed() const { return exactReason == ExactReason::None; }
  bool anySize = false;    // QCCL_CALL_COMPRESS: the size does not decide
  codec::CodecSpec codec;  // the call's, or the communicator's
  size_t bytes = 0;        // the larger of the call's input and output
  bool errorFeedback = false;
  uint64_t efKey = 0;  // the call's key, else derived from (collective, sendbuff, count, dtype)
  bool efKeyDerived = false;
  float efDecay = 1.0f;      // the call's, or the communicator's (docs/ERROR_FEEDBACK.md)
  uint64_t efSignature = 0;  // the call's shape: a key's residuals reset when it changes
  coll::AllreduceAlgorithm algorithm = coll::AllreduceAlgorithm::Sra;  // after fallbacks
  int hierGroupSize = 0;
  coll::GatherMode gatherMode = coll::GatherMode::Decoded;  // allgather
};

// Checks a collective's datatype, count (sendFactor and recvFactor: how many times count the send
// and receive buffers hold) and buffers; throws Error(qcclInvalidArgument) naming what is wrong.
void checkBuffers(const void* send, const void* recv, size_t count, qcclDataType_t dtype,
                  size_t sendFactor, size_t recvFactor);

// The algorithm a communicator's compressed allreduces run: QCCL_ALGO, but sra where hier finds no
// even groups or there is one rank.
coll::AllreduceAlgorithm allreduceAlgorithm(const Settings& settings, const CommShape& comm);

// Checks the arguments (throws Error(qcclInvalidArgument) naming what is wrong) and plans the
// call. Pure: the same inputs give the same plan on every rank.
// With QCCL_MIN_BYTES=auto the size test is left to applyAutoMinBytes.
CallPlan planCall(const Settings& settings, const CommShape& comm, const ReductionCall& call);

// QCCL_MIN_BYTES=auto: a compressed plan smaller than the cost model's threshold for its shape
// (auto_min_bytes.h) goes exact, unless its call said QCCL_CALL_COMPRESS.
void applyAutoMinBytes(CallPlan& plan, size_t threshold);

}  // namespace qccl
