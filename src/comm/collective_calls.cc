#include "src/comm/collective_calls.h"

#include <vector>

#include "collectives/collectives.h"
#include "collectives/reduction.h"
#include "collectives/stream_schedule.h"
#include "src/comm/call_guard.h"
#include "src/comm/call_route.h"
#include "src/common/error.h"
#include "src/common/log.h"
#include "src/device/memory_kind.h"

namespace qccl {

namespace {

// The device the route's buffers are on is current for the call.
struct RouteDevice {
  explicit RouteDevice(const CallRoute& route)
      : guard(route.placement.kind == coll::MemoryKind::Device ? route.placement.device : -1) {}
  device::CurrentDevice guard;
};

}  // namespace

void runReduction(qcclComm& comm, const ReductionCall& call) {
  CallPlan plan = planCall(comm.settings, {comm.nranks, comm.hierGroupSize}, call);
  // Ring and hier send partial sums of other ranks' inputs through the worker residuals too.
  bool ownInputResiduals = true;
  const auto body = [&] {
    const CallRoute route = routeCall(comm, call.send, call.recv, call.stream);
    if (call.count == 0) return;
    RouteDevice current(route);
    coll::Context context = makeContext(comm, route, plan.codec, call.stream);
    if (plan.compressed() && !plan.anySize && comm.settings.minBytesAuto) {
      applyAutoMinBytes(plan, route.route == Route::Stream
                                  ? kStreamAutoMinBytes
                                  : comm.autoMinBytes.threshold(context, call.kind, call.dtype));
    }
    if (plan.errorFeedback) {
      context.residuals =
          &comm.ef->forCall(plan.efKey, plan.efSignature, *context.executor, plan.efKeyDerived);
      context.efDecay = plan.efDecay;
    }
    QCCL_TRACE(kLogColl, "call %llu %s count %zu dtype %d %s memory: %s %s",
               static_cast<unsigned long long>(context.sequence), collectiveName(call.kind),
               call.count, int(call.dtype), coll::memoryName(route.placement.kind),
               describe(plan.exactReason),
               plan.compressed() ? codec::codecName(plan.codec).c_str() : "");
    const bool compressed = plan.compressed();
    const size_t width = coll::dataTypeSize(call.dtype), n = size_t(comm.nranks);
    const size_t sendBytes =
        call.count * width * (call.kind == CollectiveKind::ReduceScatter ? n : 1);
    const size_t recvBytes = call.count * width * (call.kind == CollectiveKind::AllGather ? n : 1);
    auto onHost = [&](const void* send, void* recv) {
      const coll::ReduceArgs args{send, recv, call.count, call.dtype, call.op};
      switch (call.kind) {
        case CollectiveKind::AllReduce:
          ownInputResiduals = plan.algorithm == coll::AllreduceAlgorithm::Sra ||
                              plan.algorithm == coll::AllreduceAlgorithm::Gather;
          return coll::allreduce(context, args, compressed, plan.algorithm, plan.hierGroupSize);
        case CollectiveKind::ReduceScatter: return coll::reduceScatter(context, args, compressed);
        case CollectiveKind::AllGather:
          return coll::allgather(context, send, recv, call.count, call.dtype, compressed,
                                 plan.gatherMode);
      }
    };
    if (route.route == Route::Tagged) return onHost(call.send, call.recv);
    if (route.route == Route::Staged) {
      return runStaged(comm, call.send, sendBytes, call.recv, recvBytes, onHost);
    }
    const coll::ReduceArgs args{call.send, call.recv, call.count, call.dtype, call.op};
    if (isBitwiseOp(call.op)) {
      throwError(qcclInvalidUsage,
                 "bitwise reductions run over host transports (ucx, mpi, "
                 "local); NCCL has none");
    }
    switch (call.kind) {
      case CollectiveKind::AllReduce: return coll::allreduceStream(context, args, compressed);
      case CollectiveKind::ReduceScatter:
        return coll::reduceScatterStream(context, args, compressed);
      case CollectiveKind::AllGather:
        return coll::allgatherStream(context, call.send, call.recv, call.count, call.dtype,
                                     compressed, plan.gatherMode);
    }
  };
  guarded(comm, [&] {
    body();
    if (comm.ef) comm.ef->settle(ownInputResiduals);
  });
}

void runBroadcast(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                  int root, cudaStream_t stream) {
  if (root < 0 || root >= comm.nranks) {
    throwError(qcclInvalidArgument, "root %d is out of range for %d ranks", root, comm.nranks);
  }
  checkBuffers(comm.rank == root ? send : recv, recv, count, dtype, 1, 1);
  guarded(comm, [&] {
    const CallRoute route = routeCall(comm, comm.rank == root ? send : nullptr, recv, stream);
    if (count == 0) return;
    RouteDevice current(route);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    const size_t bytes = count * coll::dataTypeSize(dtype);
    auto onHost = [&](const void* s, void* r) {
      coll::broadcast(context, s, r, count, dtype, root);
    };
    if (route.route == Route::Tagged) return onHost(send, recv);
    if (route.route == Route::Staged) {
      return runStaged(comm, comm.rank == root ? send : recv, comm.rank == root ? bytes : 0, recv,
                       bytes, onHost);
    }
    coll::broadcastStream(context, send, recv, count, dtype, root);
  });
}

void runAlltoall(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 cudaStream_t stream) {
  checkBuffers(send, recv, count, dtype, size_t(comm.nranks), size_t(comm.nranks));
  guarded(comm, [&] {
    const CallRoute route = routeCall(comm, send, recv, stream);
    if (count == 0) return;
    RouteDevice current(route);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    const size_t bytes = count * coll::dataTypeSize(dtype) * size_t(comm.nranks);
    auto onHost = [&](const void* s, void* r) { coll::alltoall(context, s, r, count, dtype); };
    if (route.route == Route::Tagged) return onHost(send, recv);
    if (route.route == Route::Staged) return runStaged(comm, send, bytes, recv, bytes, onHost);
    coll::alltoallStream(context, send, recv, count, dtype);
  });
}

namespace {

using RootedBody = void (*)(coll::Context&, const void*, void*, size_t, qcclDataType_t, int);

// Gather and scatter: the root's buffer holds nranks blocks, every other rank's one.
void runRooted(qcclComm& comm, const char* name, RootedBody body, const void* send, void* recv,
               size_t count, qcclDataType_t dtype, int root, cudaStream_t stream, bool gather) {
  if (root < 0 || root >= comm.nranks) {
    throwError(qcclInvalidArgument, "root %d is out of range for %d ranks", root, comm.nranks);
  }
  const size_t n = size_t(comm.nranks), atRoot = comm.rank == root ? n : 1;
  // Away from the root a gather has no recvbuff and a scatter no sendbuff (NCCL's rule).
  if (comm.rank != root) {
    if (gather) {
      recv = nullptr;
    } else {
      send = nullptr;
    }
  }
  checkBuffers(send ? send : recv, recv ? recv : send, count, dtype, gather ? 1 : atRoot,
               gather ? atRoot : 1);
  guarded(comm, [&] {
    const CallRoute route = routeCall(comm, send, recv, stream);
    if (count == 0) return;
    if (route.route == Route::Stream) {
      throwError(qcclInvalidUsage,
                 "%s runs over host transports (ucx, mpi, local); not on NCCL "
                 "streams",
                 name);
    }
    RouteDevice current(route);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    const size_t bytes = count * coll::dataTypeSize(dtype);
    auto onHost = [&](const void* s, void* r) { body(context, s, r, count, dtype, root); };
    if (route.route == Route::Tagged) return onHost(send, recv);
    runStaged(comm, send, send ? bytes * (gather ? 1 : atRoot) : 0, recv,
              recv ? bytes * (gather ? atRoot : 1) : 0, onHost);
  });
}

}  // namespace

void runGather(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
               int root, cudaStream_t stream) {
  runRooted(comm, "qcclGather", coll::gatherToRoot, send, recv, count, dtype, root, stream, true);
}

void runScatter(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                int root, cudaStream_t stream) {
  runRooted(comm, "qcclScatter", coll::scatterFromRoot, send, recv, count, dtype, root, stream,
            false);
}

void runReduce(qcclComm& comm, const ReductionCall& call, int root) {
  if (root < 0 || root >= comm.nranks) {
    throwError(qcclInvalidArgument, "root %d is out of range for %d ranks", root, comm.nranks);
  }
  if (call.stream != nullptr || device::placementOf(call.send).kind != coll::MemoryKind::Host ||
      device::placementOf(call.recv).kind != coll::MemoryKind::Host) {
    throwError(qcclInvalidUsage, "qcclReduce takes host buffers and a NULL stream");
  }
  if (comm.rank == root) return runReduction(comm, call);
  // Elsewhere recvbuff is not written (NCCL's rule): the allreduce goes to a scratch vector.
  std::vector<uint8_t> scratch(call.count * coll::dataTypeSize(call.dtype));
  ReductionCall elsewhere = call;
  elsewhere.recv = call.count ? scratch.data() : nullptr;
  runReduction(comm, elsewhere);
}

void runBarrier(qcclComm& comm, cudaStream_t stream) {
  guarded(comm, [&] {
    const CallRoute route = routeBarrier(comm, stream);
    RouteDevice current(route);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    if (route.route == Route::Tagged) return coll::barrier(context);
    coll::barrierStream(context);
    if (stream == nullptr) context.executor->fence();  // a host barrier: the peers got here
  });
}

qcclPrediction_t predictCall(qcclComm& comm, CollectiveKind kind, size_t count,
                             qcclDataType_t dtype, const codec::CodecSpec& codec) {
  if (codec.format == codec::Format::None) {
    throwError(qcclInvalidArgument, "the cost model compares a codec with exact: codec is none");
  }
  if (!compressibleDtype(dtype)) {
    throwError(qcclInvalidArgument, "only fp32, bf16 and fp16 calls are compressed (dtype %d)",
               int(dtype));
  }
  qcclPrediction_t out{};
  guarded(comm, [&] {
    if (!comm.transport || comm.nranks == 1) {
      throwError(qcclInvalidUsage, "the cost model needs a host transport and more than one rank");
    }
    coll::Context context = makeContext(comm, {Route::Tagged, {}}, codec, nullptr);
    const CostInputs in = comm.autoMinBytes.inputs(context);
    const Prediction compressed = predictCompressed(in, kind, count, dtype, codec);
    const Prediction exact = predictExact(in, kind, count, dtype);
    out = {compressed.seconds, exact.seconds, compressed.wireBytes, exact.wireBytes,
           comm.autoMinBytes.threshold(context, kind, dtype)};
  });
  return out;
}

}  // namespace qccl
