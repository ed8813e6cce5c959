#include "src/comm/call_plan.h"

#include <cstring>

#include "codecs/codec.h"
#include "codecs/codec_error.h"
#include "collectives/reduction.h"
#include "collectives/type_names.h"
#include "src/comm/cost_model.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

constexpr size_t kMaxElements = size_t(1) << 56;

}  // namespace

void checkBuffers(const void* send, const void* recv, size_t count, qcclDataType_t dtype,
                  size_t sendFactor, size_t recvFactor) {
  if (int(dtype) < 0 || int(dtype) >= int(qcclNumTypes)) {
    throwError(qcclInvalidArgument, "invalid datatype %d", int(dtype));
  }
  if (count > kMaxElements / (sendFactor > recvFactor ? sendFactor : recvFactor)) {
    throwError(qcclInvalidArgument, "count %zu is absurd (limit 2^56 elements per buffer)", count);
  }
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    throwError(qcclInvalidArgument, "%s is NULL", send == nullptr ? "sendbuff" : "recvbuff");
  }
}

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

struct CallOptions {
  codec::CodecSpec codec;
  uint64_t efKey = 0;
  unsigned flags = 0;
  float efDecay = 1.0f;
};

CallOptions callOptions(const Settings& settings, const qcclCallConfig_t* config) {
  CallOptions o;
  o.codec = settings.codec;
  o.efDecay = settings.efDecay;
  if (config == nullptr) return o;
  if (config->magic != QCCL_CALL_CONFIG_MAGIC || config->size < offsetof(qcclCallConfig_t, codec) ||
      config->size > sizeof(qcclCallConfig_t)) {
    throwError(qcclInvalidArgument, "call config was not set up from QCCL_CALL_CONFIG_INITIALIZER");
  }
  qcclCallConfig_t c = QCCL_CALL_CONFIG_INITIALIZER;
  std::memcpy(&c, config, config->size);
  if (c.flags & ~(QCCL_CALL_EXACT | QCCL_CALL_NO_EF | QCCL_CALL_KEEP_OWN_SHARD | QCCL_CALL_DELTA |
                  QCCL_CALL_COMPRESS)) {
    throwError(qcclInvalidArgument, "call config flags 0x%x has unknown bits", c.flags);
  }
  if ((c.flags & QCCL_CALL_EXACT) && (c.flags & QCCL_CALL_COMPRESS)) {
    throwError(qcclInvalidArgument, "QCCL_CALL_EXACT and QCCL_CALL_COMPRESS exclude each other");
  }
  if (c.codec != nullptr) {
    try {
      o.codec = codec::parseCodecSpec(c.codec);
    } catch (const codec::CodecError& e) {
      throwError(qcclInvalidArgument, "%s", e.what());
    }
  }
  if (c.efDecay != QCCL_CONFIG_UNDEF_FLOAT) {
    if (!codec::validResidualDecay(c.efDecay)) {
      throwError(qcclInvalidArgument, "call config efDecay %g is not in [0, 1]", double(c.efDecay));
    }
    o.efDecay = c.efDecay;
  }
  o.efKey = c.efKey;
  o.flags = c.flags;
  return o;
}

ExactReason exactReason(const Settings& settings, const CommShape& comm, const ReductionCall& call,
                        const CallOptions& options, size_t bytes) {
  if (options.codec.format == codec::Format::None) return ExactReason::CodecNone;
  if (options.flags & QCCL_CALL_EXACT) return ExactReason::CallFlag;
  if (!(settings.compressedCollectives & collectiveBit(call.kind))) {
    return ExactReason::OpNotEnabled;
  }
  if (!compressibleDtype(call.dtype)) return ExactReason::Dtype;
  if (call.kind != CollectiveKind::AllGather && call.op != qcclSum && call.op != qcclAvg) {
    return ExactReason::Op;
  }
  if (!settings.minBytesAuto && !(options.flags & QCCL_CALL_COMPRESS) &&
      bytes < settings.minBytes) {
    return ExactReason::BelowMinBytes;
  }
  if (comm.nranks == 1 && !settings.compressOneRank) return ExactReason::SingleRank;
  return ExactReason::None;
}

bool overlap(const void* a, size_t aBytes, const void* b, size_t bBytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

coll::GatherMode gatherMode(const ReductionCall& call, unsigned flags, size_t nranks) {
  const bool keepOwn = flags & QCCL_CALL_KEEP_OWN_SHARD, delta = flags & QCCL_CALL_DELTA;
  if (!delta) return keepOwn ? coll::GatherMode::KeepOwnExact : coll::GatherMode::Decoded;
  if (call.kind != CollectiveKind::AllGather) {
    throwError(qcclInvalidArgument, "QCCL_CALL_DELTA is an allgather flag");
  }
  if (keepOwn) {
    throwError(qcclInvalidArgument,
               "QCCL_CALL_DELTA and QCCL_CALL_KEEP_OWN_SHARD exclude each other");
  }
  const size_t width = coll::dataTypeSize(call.dtype);
  if (overlap(call.send, call.count * width, call.recv, nranks * call.count * width)) {
    throwError(qcclInvalidArgument,
               "QCCL_CALL_DELTA: sendbuff lies in recvbuff, which holds the previous result the "
               "change is taken against");
  }
  return coll::GatherMode::Delta;
}

}  // namespace

coll::AllreduceAlgorithm allreduceAlgorithm(const Settings& settings, const CommShape& comm) {
  if (comm.nranks == 1) return coll::AllreduceAlgorithm::Sra;
  if (settings.algorithm == coll::AllreduceAlgorithm::Hier && comm.hierGroupSize == 0) {
    return coll::AllreduceAlgorithm::Sra;
  }
  return settings.algorithm;
}

bool isBitwiseOp(qcclRedOp_t op) {
  return op == qcclBitwiseAnd || op == qcclBitwiseOr || op == qcclBitwiseXor;
}

void checkOp(qcclRedOp_t op, qcclDataType_t dtype) {
  if ((int(op) < 0 || int(op) >= int(qcclNumOps)) && !isBitwiseOp(op)) {
    throwError(qcclInvalidArgument, "invalid reduction op %d", int(op));
  }
  if (isBitwiseOp(op) && coll::isFloatType(dtype)) {
    throwError(qcclInvalidArgument, "bitwise op %s takes integer dtypes, not dtype %d",
               coll::redOpName(op), int(dtype));
  }
}

bool compressibleDtype(qcclDataType_t dtype) {
  return dtype == qcclFloat32 || dtype == qcclBfloat16 || dtype == qcclFloat16;
}

const char* describe(ExactReason reason) {
  switch (reason) {
    case ExactReason::None: return "compressed";
    case ExactReason::CodecNone: return "codec none";
    case ExactReason::CallFlag: return "QCCL_CALL_EXACT";
    case ExactReason::OpNotEnabled: return "collective not in QCCL_OPS";
    case ExactReason::Dtype: return "dtype not fp32/bf16/fp16";
    case ExactReason::Op: return "op not Sum/Avg";
    case ExactReason::BelowMinBytes: return "below QCCL_MIN_BYTES";
    case ExactReason::ModelPrefersExact: return "cost model: exact is faster at this size";
    case ExactReason::SingleRank: return "one rank";
  }
  return "?";
}

CallPlan planCall(const Settings& settings, const CommShape& comm, const ReductionCall& call) {
  const size_t n = size_t(comm.nranks);
  const size_t sendFactor = call.kind == CollectiveKind::ReduceScatter ? n : 1;
  const size_t recvFactor = call.kind == CollectiveKind::AllGather ? n : 1;
  checkBuffers(call.send, call.recv, call.count, call.dtype, sendFactor, recvFactor);
  if (call.kind != CollectiveKind::AllGather) checkOp(call.op, call.dtype);
  const CallOptions options = callOptions(settings, call.config);

  CallPlan plan;
  plan.codec = options.codec;
  plan.bytes = call.count * sendFactor * recvFactor * coll::dataTypeSize(call.dtype);
  plan.exactReason = exactReason(settings, comm, call, options, plan.bytes);
  plan.anySize = (options.flags & QCCL_CALL_COMPRESS) != 0;
  plan.gatherMode = gatherMode(call, options.flags, n);
  plan.algorithm = allreduceAlgorithm(settings, comm);
  if (plan.compressed() && call.kind == CollectiveKind::AllReduce) {
    plan.algorithm =
        compressedAllreduceAlgorithm(plan.algorithm, comm.nranks, settings.segmentElements,
                                     call.count, call.dtype, options.codec);
  }
  plan.hierGroupSize = comm.hierGroupSize;
  if (settings.algorithm == coll::AllreduceAlgorithm::Hier && comm.hierGroupSize == 0) {
    QCCL_WARN("hier: ranks do not split into even groups; using sra");
  }
  // A delta allgather's reference (the output) carries what was not sent: no residual besides.
  plan.errorFeedback = plan.compressed() && settings.errorFeedback &&
                       !(options.flags & QCCL_CALL_NO_EF) &&
                       plan.gatherMode != coll::GatherMode::Delta;
  if (plan.errorFeedback) {
    plan.efDecay = options.efDecay;
    plan.efKeyDerived = options.efKey == 0;
    plan.efKey =
        options.efKey != 0
            ? options.efKey
            : mix(mix(mix(uint64_t(call.kind), reinterpret_cast<uintptr_t>(call.send)), call.count),
                  uint64_t(call.dtype));
    uint64_t signature = mix(uint64_t(call.kind), call.count);
    signature = mix(mix(signature, uint64_t(call.dtype)), uint64_t(settings.algorithm));
    for (char ch : codec::codecName(options.codec)) signature = mix(signature, uint64_t(ch));
    plan.efSignature = signature | 1;
  }
  return plan;
}

void applyAutoMinBytes(CallPlan& plan, size_t threshold) {
  if (!plan.compressed() || plan.anySize || plan.bytes >= threshold) return;
  plan.exactReason = ExactReason::ModelPrefersExact;
  plan.errorFeedback = false;
}

}  // namespace qccl
