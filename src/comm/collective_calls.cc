#include "src/comm/collective_calls.h"

#include "collectives/collectives.h"
#include "collectives/host_executor.h"
#include "collectives/stream_schedule.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

void checkStream(cudaStream_t stream) {
  if (stream != nullptr) {
    throwError(qcclInvalidUsage,
               "a CUDA stream was given, but this release runs collectives on host memory only: "
               "pass a NULL stream (device buffers go through the NCCL path)");
  }
}

// How a call moves its bytes: through the tagged transport (host memory, pipelined schedules) or
// the stream-ordered exchange (NCCL).
enum class Route { Tagged, Stream };

Route routeOf(const qcclComm& comm) {
  if (comm.transport) return Route::Tagged;
  if (!comm.nccl->takesHostMemory()) {
    throwError(qcclInvalidUsage,
               "this communicator moves data with NCCL, which takes device buffers only; host "
               "buffers need QCCL_TRANSPORT=ucx, mpi or local");
  }
  return Route::Stream;
}

// The collective's context: the whole communicator, a fresh deadline, the next sequence number.
coll::Context makeContext(qcclComm& comm, Route route, const codec::CodecSpec& spec,
                          cudaStream_t stream) {
  coll::Context c;
  for (int r = 0; r < comm.nranks; ++r) c.group.ranks.push_back(r);
  c.group.me = comm.rank;
  c.aborted = &comm.aborted;
  c.deadline = Deadline::after(comm.settings.timeout);
  c.sequence = comm.sequence++;
  c.codec = spec;
  c.seed = comm.seed;
  c.wire = &comm.wire;
  c.executor = &coll::hostExecutor();
  c.workspace = &comm.workspace;
  if (route == Route::Tagged) {
    c.transport = comm.transport.get();
    c.segmentElements = comm.settings.segmentElements;
  } else {
    comm.nccl->setStream(stream);
    c.exchange = comm.nccl.get();
  }
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
    if (e.code() == qcclTimeout || e.code() == qcclRemoteError || e.code() == qcclSystemError) {
      comm.failure = e.what();
      comm.state.store(qcclComm::State::Failed);
      QCCL_WARN("rank %d: %s", comm.rank, e.what());
    }
    throw;
  }
}

}  // namespace

void runReduction(qcclComm& comm, const ReductionCall& call) {
  checkStream(call.stream);
  const CallPlan plan = planCall(comm.settings, {comm.nranks, comm.hierGroupSize}, call);
  guarded(comm, [&] {
    if (call.count == 0) return;
    const Route route = routeOf(comm);
    coll::Context context = makeContext(comm, route, plan.codec, call.stream);
    if (plan.errorFeedback) {
      context.residuals = &comm.ef->forCall(plan.efKey, plan.efSignature, *context.executor);
    }
    QCCL_TRACE(kLogColl, "call %llu %s count %zu dtype %d: %s %s",
               static_cast<unsigned long long>(context.sequence), collectiveName(call.kind),
               call.count, int(call.dtype), describe(plan.exactReason),
               plan.compressed() ? codec::codecName(plan.codec).c_str() : "");
    const bool compressed = plan.compressed();
    const coll::ReduceArgs args{call.send, call.recv, call.count, call.dtype, call.op};
    switch (call.kind) {
      case CollectiveKind::AllReduce:
        if (route == Route::Stream) {
          coll::allreduceStream(context, args, compressed);
        } else {
          coll::allreduce(context, args, compressed, plan.algorithm, plan.hierGroupSize);
        }
        break;
      case CollectiveKind::ReduceScatter:
        if (route == Route::Stream) {
          coll::reduceScatterStream(context, args, compressed);
        } else {
          coll::reduceScatter(context, args, compressed);
        }
        break;
      case CollectiveKind::AllGather:
        if (route == Route::Stream) {
          coll::allgatherStream(context, call.send, call.recv, call.count, call.dtype, compressed,
                                plan.keepOwnShardExact);
        } else {
          coll::allgather(context, call.send, call.recv, call.count, call.dtype, compressed,
                          plan.keepOwnShardExact);
        }
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
    const Route route = routeOf(comm);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    if (route == Route::Stream) {
      coll::broadcastStream(context, send, recv, count, dtype, root);
    } else {
      coll::broadcast(context, send, recv, count, dtype, root);
    }
  });
}

void runAlltoall(qcclComm& comm, const void* send, void* recv, size_t count, qcclDataType_t dtype,
                 cudaStream_t stream) {
  checkStream(stream);
  checkBuffers(send, recv, count, dtype, size_t(comm.nranks), size_t(comm.nranks));
  guarded(comm, [&] {
    if (count == 0) return;
    const Route route = routeOf(comm);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    if (route == Route::Stream) {
      coll::alltoallStream(context, send, recv, count, dtype);
    } else {
      coll::alltoall(context, send, recv, count, dtype);
    }
  });
}

void runBarrier(qcclComm& comm, cudaStream_t stream) {
  checkStream(stream);
  guarded(comm, [&] {
    const Route route = routeOf(comm);
    coll::Context context = makeContext(comm, route, codec::CodecSpec{}, stream);
    if (route == Route::Stream) {
      coll::barrierStream(context);
    } else {
      coll::barrier(context);
    }
  });
}

}  // namespace qccl
