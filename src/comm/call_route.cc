#include "src/comm/call_route.h"

#include <cstring>
#include <vector>

#include "codecs/codec.h"
#include "collectives/collectives.h"
#include "collectives/host_executor.h"
#include "src/common/error.h"
#include "src/common/log.h"

namespace qccl {

namespace {

device::Placement placementOfCall(const void* send, const void* recv) {
  const device::Placement s = device::placementOf(send), r = device::placementOf(recv);
  if (send == nullptr) return r;
  if (recv == nullptr) return s;
  if (s.kind != r.kind || s.device != r.device) {
    throwError(qcclInvalidArgument, "sendbuff is in %s memory%s, recvbuff in %s memory%s",
               coll::memoryName(s.kind), s.kind == coll::MemoryKind::Device ? " of a GPU" : "",
               coll::memoryName(r.kind), r.kind == coll::MemoryKind::Device ? " of a GPU" : "");
  }
  return s;
}

// Fails the communicator for the error its device raised since the last call.
void checkAsyncError(qcclComm& comm) {
  if (!comm.device || comm.device->asyncError() == 0) return;
  comm.failure =
      "a device decode met a chunk that did not match (ranks disagree on a call's codec or count)";
  comm.failureCode = qcclInvalidUsage;
  comm.state.store(qcclComm::State::Failed);
  throwError(qcclInvalidUsage, "%s", comm.failure.c_str());
}

// QCCL_TRANSPORT=auto, first device call: NCCL if every rank can load it, else staging. Rank 0's
// NCCL unique id reaches the others through the tagged transport.
void settleNccl(qcclComm& comm, int gpu) {
  comm.ncclSettled = true;
  bool loads = true;
  try {
    nccl::library();
  } catch (const Error& e) {
    loads = false;
    QCCL_INFO(kLogInit, "device buffers: %s", e.what());
  }
  const CallRoute host{Route::Tagged, {}};
  const uint8_t mine = loads ? 1 : 0;
  std::vector<uint8_t> all(size_t(comm.nranks));
  coll::Context agree = makeContext(comm, host, {}, nullptr);
  coll::allgather(agree, &mine, all.data(), 1, qcclUint8, false, coll::GatherMode::Decoded);
  for (int r = 0; r < comm.nranks; ++r) {
    if (!all[size_t(r)]) {
      QCCL_WARN("rank %d cannot load NCCL: device buffers go through host memory over %s", r,
                comm.transport->name());
      return;
    }
  }
  nccl::UniqueId id{};
  if (comm.rank == 0) nccl::check(nccl::library().getUniqueId(&id), "ncclGetUniqueId");
  coll::Context share = makeContext(comm, host, {}, nullptr);
  coll::broadcast(share, &id, &id, sizeof id, qcclUint8, 0);
  device::CurrentDevice current(gpu);
  comm.nccl = std::make_unique<nccl::NcclExchange>(id, comm.rank, comm.nranks);
  QCCL_INFO(kLogInit, "rank %d: device buffers on GPU %d over NCCL", comm.rank, gpu);
}

// The device executor on `gpu`, made at the first device call.
void useDevice(qcclComm& comm, int gpu) {
  if (!comm.device) {
    comm.device = device::makeDeviceExecutor(gpu);
    comm.deviceWorkspace = std::make_unique<coll::Workspace>(comm.device->allocator());
    comm.staging = std::make_unique<coll::Workspace>(comm.device->pinnedAllocator());
  } else if (comm.device->device() != gpu) {
    throwError(qcclInvalidUsage, "the buffers are on GPU %d, this communicator works on GPU %d",
               gpu, comm.device->device());
  }
  checkAsyncError(comm);
}

}  // namespace

CallRoute routeCall(qcclComm& comm, const void* send, const void* recv, cudaStream_t stream) {
  CallRoute route{Route::Tagged, placementOfCall(send, recv)};
  if (route.placement.kind == coll::MemoryKind::Host) {
    if (stream != nullptr) {
      throwError(qcclInvalidUsage,
                 "a CUDA stream was given with host buffers: host buffers take a NULL stream");
    }
    if (comm.transport) return route;
    if (!comm.nccl->takesHostMemory()) {
      throwError(qcclInvalidUsage,
                 "this communicator moves data with NCCL, which takes device buffers only; host "
                 "buffers need QCCL_TRANSPORT=ucx, mpi or local");
    }
    route.route = Route::Stream;
    return route;
  }
  useDevice(comm, route.placement.device);
  if (!comm.ncclSettled) settleNccl(comm, route.placement.device);
  route.route = comm.nccl ? Route::Stream : Route::Staged;
  return route;
}

CallRoute routeBarrier(qcclComm& comm, cudaStream_t stream) {
  if (stream == nullptr && comm.transport) return {Route::Tagged, {}};
  if (!comm.nccl) {
    throwError(qcclInvalidUsage,
               "qcclBarrier with a stream runs over NCCL, which this communicator has not "
               "(QCCL_TRANSPORT=nccl or auto with a device call made before)");
  }
  CallRoute route{Route::Stream, {}};
  if (stream != nullptr || !comm.nccl->takesHostMemory()) {
    route.placement = {coll::MemoryKind::Device,
                       comm.device ? comm.device->device() : device::currentDevice()};
    useDevice(comm, route.placement.device);
  }
  return route;
}

coll::Context makeContext(qcclComm& comm, const CallRoute& route, const codec::CodecSpec& spec,
                          cudaStream_t stream) {
  coll::Context c;
  for (int r = 0; r < comm.nranks; ++r) c.group.ranks.push_back(r);
  c.group.me = comm.rank;
  c.aborted = &comm.aborted;
  c.silent = &comm.silentPeers;
  c.notice = &comm.failureNotice;
  c.deadline = Deadline::after(comm.settings.timeout);
  c.sequence = comm.sequence++;
  c.codec = spec;
  c.seed = comm.seed;
  c.wire = &comm.wire;
  c.executor = &coll::hostExecutor();
  c.workspace = &comm.workspace;
  if (route.route != Route::Stream) {
    c.transport = comm.transport.get();
    c.segmentElements = comm.settings.segmentElements;
  } else {
    comm.nccl->setStream(stream);
    c.exchange = comm.nccl.get();
  }
  if (route.placement.kind == coll::MemoryKind::Device) {
    comm.device->setStream(stream);
    if (route.route == Route::Stream) {
      codec::requireDeviceKernels(spec);
      c.executor = comm.device.get();
      c.workspace = comm.deviceWorkspace.get();
    }
  }
  return c;
}

void runStaged(qcclComm& comm, const void* send, size_t sendBytes, void* recv, size_t recvBytes,
               const std::function<void(const void*, void*)>& body) {
  device::DeviceExecutor& gpu = *comm.device;
  if (gpu.capturing()) {
    throwError(qcclInvalidUsage,
               "device buffers on a %s communicator are staged through host memory, which a CUDA "
               "graph cannot capture: use NCCL (QCCL_TRANSPORT=auto or nccl)",
               comm.transport->name());
  }
  const auto* s = static_cast<const uint8_t*>(send);
  auto* r = static_cast<uint8_t*>(recv);
  coll::Buffer& in = comm.staging->buffer(coll::Slot::StagedSend, 0);
  const uint8_t* hostSend;
  uint8_t* hostRecv;
  if (s < r + recvBytes && r < s + sendBytes) {  // in place: one copy of the union
    const uint8_t* low = s < r ? s : r;
    const uint8_t* high = s + sendBytes > r + recvBytes ? s + sendBytes : r + recvBytes;
    in.resize(size_t(high - low));
    hostSend = in.data() + (s - low);
    hostRecv = in.data() + (r - low);
  } else {
    coll::Buffer& out = comm.staging->buffer(coll::Slot::StagedRecv, 0);
    in.resize(sendBytes);
    out.resize(recvBytes);
    hostSend = in.data();
    hostRecv = out.data();
  }
  gpu.toHost(const_cast<uint8_t*>(hostSend), send, sendBytes);
  body(hostSend, hostRecv);
  gpu.fromHost(recv, hostRecv, recvBytes);
}

}  // namespace qccl
