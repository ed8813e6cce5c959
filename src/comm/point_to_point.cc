#include "src/comm/point_to_point.h"

#include <cstring>

#include "collectives/context.h"
#include "collectives/messages.h"
#include "collectives/reduction.h"
#include "src/comm/call_plan.h"
#include "src/comm/comm.h"
#include "src/common/error.h"

namespace qccl {

namespace {

uint32_t transportTag(uint32_t tag) { return (tag << 8) | coll::kPointToPointStep; }

}  // namespace

uint64_t PointToPoint::post(qcclComm& comm, const P2pMessage& m) {
  checkBuffers(m.buffer, m.buffer, m.count, m.dtype, 1, 1);
  if (m.anySource && m.send) throwError(qcclInternalError, "a send to any rank");
  if (!m.anySource && (m.peer < 0 || m.peer >= comm.nranks)) {
    throwError(qcclInvalidArgument, "peer %d is out of range for %d ranks", m.peer, comm.nranks);
  }
  if (m.tag > kMaxPointToPointTag) {
    throwError(qcclInvalidArgument, "tag %u is over %u", m.tag, kMaxPointToPointTag);
  }
  if (!comm.transport) {
    throwError(qcclInvalidUsage,
               "point-to-point messages go over a host transport (ucx, mpi, local); this "
               "communicator has only NCCL");
  }
  const size_t payload = m.count * coll::dataTypeSize(m.dtype);
  Pending p;
  p.message = m;
  p.framed.resize(coll::kExactHeaderBytes + payload);
  const uint32_t tag = transportTag(m.tag);
  if (m.send) {
    coll::writeExactHeader(p.framed.data(), m.dtype, 0, coll::MessageKind::PointToPoint, m.count);
    if (payload) std::memcpy(p.framed.data() + coll::kExactHeaderBytes, m.buffer, payload);
    p.request = comm.transport->isend(m.peer, tag, p.framed.data(), p.framed.size());
    comm.wire.sent += p.framed.size();
  } else if (!m.anySource) {
    p.request = comm.transport->irecv(m.peer, tag, p.framed.data(), p.framed.size());
  }
  p.posted = !m.anySource;
  const uint64_t id = next_++;
  pending_.emplace(id, std::move(p));
  return id;
}

bool PointToPoint::test(qcclComm& comm, uint64_t id) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) {
    throwError(qcclInvalidArgument, "no point-to-point message %llu is pending",
               static_cast<unsigned long long>(id));
  }
  Pending& p = it->second;
  if (!p.posted) {
    postAnySource(comm, p.message.tag, id);
    if (!p.posted) return false;
  }
  bool done = false;
  try {
    done = comm.transport->test(p.request);
  } catch (...) {
    pending_.erase(it);  // the transport released the request
    throw;
  }
  if (!done) return false;
  const Pending finished = std::move(p);
  pending_.erase(it);
  if (finished.message.send) return true;
  comm.wire.received += finished.framed.size();
  const P2pMessage& m = finished.message;
  const std::string mismatch = coll::checkExactHeader(finished.framed.data(), m.dtype, 0,
                                                      coll::MessageKind::PointToPoint, m.count);
  if (!mismatch.empty()) {
    throwError(qcclInvalidUsage, "receive from rank %d, tag %u: %s", m.peer, m.tag,
               mismatch.c_str());
  }
  const size_t payload = finished.framed.size() - coll::kExactHeaderBytes;
  if (payload) std::memcpy(m.buffer, finished.framed.data() + coll::kExactHeaderBytes, payload);
  if (m.source) *m.source = m.peer;
  return true;
}

void PointToPoint::postAnySource(qcclComm& comm, uint32_t tag, uint64_t upTo) {
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= upTo; ++it) {
    Pending& p = it->second;
    if (p.posted || p.message.tag != tag) continue;
    const int source = comm.transport->probe(transportTag(tag));
    if (source < 0) return;
    p.message.peer = source;
    p.request = comm.transport->irecv(source, transportTag(tag), p.framed.data(), p.framed.size());
    p.posted = true;
  }
}

void PointToPoint::cancelAll(qcclComm& comm) {
  while (!pending_.empty()) cancel(comm, pending_.begin()->first);
}

void PointToPoint::cancel(qcclComm& comm, uint64_t id) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;
  if (it->second.posted) comm.transport->cancel(it->second.request);
  pending_.erase(it);
}

}  // namespace qccl
