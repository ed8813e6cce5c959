#include "src/comm/collective_calls.h"

#include <cstring>

#include "codecs/codec_error.h"
#include "collectives/collectives.h"
#include "collectives/reduction.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

constexpr size_t kMaxElements = size_t(1) << 56;

void checkStream(cudaStream_t stream) {
  if (stream != nullptr) {
    throwError(qcclInvalidUsage,
               "a CUDA stream was given, but this release runs collectives on host memory only: "
               "pass a NULL stream (device buffers go through the NCCL path)");
  }
}

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

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

// The collective's context: the whole communicator, a fresh deadline, the next sequence number.
coll::Context makeContext(qcclComm& comm, const codec::CodecSpec& spec) {
  coll::Context c;
  c.transport = comm.transport.get();
  for (int r = 0; r < comm.nranks; ++r) c.group.ranks.push_back(r);
  c.group.me = comm.rank;
  c.aborted = &comm.aborted;
  c.deadline = Deadline::after(comm.settings.timeout);
  c.sequence = comm.sequence++;
  c.codec = spec;
  c.seed = comm.seed;
  c.wire = &comm.wire;
  c.workspace = &comm.workspace;
  c.segmentElements = comm.settings.segmentElements;
  return c;
}

// Runs body under the communicator's call lock; a timeout or a lost peer leaves the
// communicator failed (its message streams are out of step).
template <class Body>
void guarded(qcclComm& comm, Body&& body) {
  std::lock_guard<std::mutex> lock(comm.callMutex);
  usableComm(&comm);
  try {
    body();
  } catch (const Error& e) {
    if (e.code() == qcclTimeout || e.code() == qcclRemoteError) {
      comm.failure = e.what();
      comm.state.store(qcclComm::State::Failed);
      QCCL_WARN("rank %d: %s", comm.rank, e.what());
    }
    throw;
  }
}

struct CallOptions {
  codec::CodecSpec codec;
  uint64_t efKey = 0;
  unsigned flags = 0;
};

CallOptions callOptions(const qcclComm& comm, const qcclCallConfig_t* config) {
  CallOptions o;
  o.codec = comm.settings.codec;
  if (config == nullptr) return o;
  if (config->magic != QCCL_CALL_CONFIG_MAGIC || config->size < offsetof(qcclCallConfig_t, codec) ||
      config->size > sizeof(qcclCallConfig_t)) {
    throwError(qcclInvalidArgument, "call config was not set up from QCCL_CALL_CONFIG_INITIALIZER");
  }
  qcclCallConfig_t c = QCCL_CALL_CONFIG_INITIALIZER;
  std::memcpy(&c, config, config->size);
  if (c.flags & ~(QCCL_CALL_EXACT | QCCL_CALL_NO_EF | QCCL_CALL_KEEP_OWN_SHARD)) {
    throwError(qcclInvalidArgument, "call config flags 0x%x has unknown bits", c.flags);
  }
  if (c.codec != nullptr) {
    try {
      o.codec = codec::parseCodecSpec(c.codec);
    } catch (const codec::CodecError& e) {
      throwError(qcclInvalidArgument, "%s", e.what());
    }
  }
  o.efKey = c.efKey;
  o.flags = c.flags;
  return o;
}

}  // namespace

void runReduction(qcclComm& comm, const ReductionCall& call) {
  checkStream(call.stream);
  const size_t n = size_t(comm.nranks);
  const size_t sendFactor = call.kind == CollectiveKind::ReduceScatter ? n : 1;
  const size_t recvFactor = call.kind == CollectiveKind::AllGather ? n : 1;
  checkBuffers(call.send, call.recv, call.count, call.dtype, sendFactor, recvFactor);
  if (call.kind != CollectiveKind::AllGather &&
      (int(call.op) < 0 || int(call.op) >= int(qcclNumOps))) {
    throwError(qcclInvalidArgument, "invalid reduction op %d", int(call.op));
  }
  const CallOptions options = callOptions(comm, call.config);
  guarded(comm, [&] {
    if (call.count == 0) return;
    const bool floatWire =
        call.dtype == qcclFloat32 || call.dtype == qcclBfloat16 || call.dtype == qcclFloat16;
    const bool summing =
        call.kind == CollectiveKind::AllGather || call.op == qcclSum || call.op == qcclAvg;
    const size_t bytes = call.count * sendFactor * recvFactor * coll::dataTypeSize(call.dtype);
    const bool compressed = floatWire && summing && options.codec.format != codec::Format::None &&
                            !(options.flags & QCCL_CALL_EXACT) && bytes >= comm.settings.minBytes &&
                            comm.nranks > 1;
    coll::Context context = makeContext(comm, options.codec);
    const bool ef = compressed && comm.settings.errorFeedback && !(options.flags & QCCL_CALL_NO_EF);
    if (ef) {
      const uint64_t key =
          options.efKey != 0
              ? options.efKey
              : mix(mix(mix(uint64_t(call.kind), reinterpret_cast<uintptr_t>(call.send)),
                        call.count),
                    uint64_t(call.dtype));
      uint64_t signature = mix(uint64_t(call.kind), call.count);
      signature = mix(mix(signature, uint64_t(call.dtype)), uint64_t(comm.settings.algorithm));
      for (char ch : codec::codecName(options.codec)) signature = mix(signature, uint64_t(ch));
      context.residuals = &comm.ef->forCall(key, signature | 1);
    }
    QCCL_TRACE(kLogColl, "call %llu kind %d count %zu dtype %d %s",
               static_cast<unsigned long long>(context.sequence), int(call.kind), call.count,
               int(call.dtype), compressed ? codec::codecName(options.codec).c_str() : "exact");
    switch (call.kind) {
      case CollectiveKind::AllReduce: {
        coll::AllreduceAlgorithm algorithm = comm.settings.algorithm;
        if (algorithm == coll::AllreduceAlgorithm::Hier && comm.hierGroupSize == 0) {
          QCCL_WARN("hier: ranks do not split into even groups; using sra");
          algorithm = coll::AllreduceAlgorithm::Sra;
        }
        coll::allreduce(context, {call.send, call.recv, call.count, call.dtype, call.op},
                        compressed, algorithm, comm.hierGroupSize);
        break;
      }
      case CollectiveKind::ReduceScatter:
        coll::reduceScatter(context, {call.send, call.recv, call.count, call.dtype, call.op},
                            compressed);
        break;
      case CollectiveKind::AllGather:
        coll::allgather(context, call.send, call.recv, call.count, call.dtype, compressed,
                        (options.flags & QCCL_CALL_KEEP_OWN_SHARD) != 0);
        break;
    }
  });
}

void runBroadcast(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                  int root, cudaStream_t stream) {
  checkStream(stream);
  if (root < 0 || root >= comm.nranks) {
    throwError(qcclInvalidArgument, "root %d is out of range for %d ranks", root, comm.nranks);
  }
  checkBuffers(comm.rank == root ? send : recv, recv, count, dtype, 1, 1);
  guarded(comm, [&] {
    if (count == 0) return;
    coll::Context context = makeContext(comm, codec::CodecSpec{});
    coll::broadcast(context, send, recv, count, dtype, root);
  });
}

void runAlltoall(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 cudaStream_t stream) {
  checkStream(stream);
  checkBuffers(send, recv, count, dtype, size_t(comm.nranks), size_t(comm.nranks));
  guarded(comm, [&] {
    if (count == 0) return;
    coll::Context context = makeContext(comm, codec::CodecSpec{});
    coll::alltoall(context, send, recv, count, dtype);
  });
}

void runBarrier(qcclComm& comm, cudaStream_t stream) {
  checkStream(stream);
  guarded(comm, [&] {
    coll::Context context = makeContext(comm, codec::CodecSpec{});
    coll::barrier(context);
  });
}

}  // namespace qccl
