// How a call runs, from where its buffers live and what the communicator has (docs/ARCHITECTURE.md,
// "Host and device buffers"):
//   Tagged  host buffers over the tagged transport: the pipelined schedules, the CPU executor;
//   Stream  device buffers over NCCL, on the caller's stream: the stream schedules, the device
//           executor (and host buffers over the test suite's stand-in NCCL, the CPU executor);
//   Staged  device buffers on a communicator without NCCL: copied through pinned host memory
//           around the Tagged route.
#pragma once

#include <functional>

#include "codecs/codec_spec.h"
#include "collectives/context.h"
#include "src/comm/comm.h"
#include "src/device/memory_kind.h"

namespace qccl {

enum class Route { Tagged, Stream, Staged };

struct CallRoute {
  Route route;
  device::Placement placement;  // of the call's buffers
};

// The route of a call on these buffers (either may be NULL) and stream. The first call on device
// buffers makes the device executor and, for QCCL_TRANSPORT=auto, NCCL (collectively: every rank
// makes its first device call at the same point of its sequence of calls). Throws Error for
// buffers of different kinds or GPUs, a stream with host buffers, a device error raised earlier.
CallRoute routeCall(qcclComm& comm, const void* send, const void* recv, cudaStream_t stream);

// The route of a barrier: with a stream, in stream order over NCCL on device memory; without
// one, over the tagged transport (or, on a communicator that has only NCCL, in stream order
// too, and the caller waits for it).
CallRoute routeBarrier(qcclComm& comm, cudaStream_t stream);

// The collective's context on that route: the whole communicator, a fresh deadline, the next
// sequence number, the route's executor, exchange and workspace (bound to the stream).
coll::Context makeContext(qcclComm& comm, const CallRoute& route, const codec::CodecSpec& spec,
                          cudaStream_t stream);

// Staged route: body(send', recv') runs on pinned host copies of the device buffers (sendBytes
// copied in first, recvBytes copied out after; buffers that overlap, as in-place calls do, share
// one copy). Waits on the stream: not in a CUDA graph capture.
void runStaged(qcclComm& comm, const void* send, size_t sendBytes, void* recv, size_t recvBytes,
               const std::function<void(const void*, void*)>& body);

}  // namespace qccl
