// Data movement in stream order, NCCL's model, beside the tagged Transport: no tags and no
// cancel; the sends and receives between groupStart and groupEnd are issued together on the
// call's stream and complete as one, after what was issued before them on that stream and before
// what comes after. The stream schedules (stream_schedule.h) are written against this; the NCCL
// implementation is src/nccl/nccl_exchange.h. Peers are ranks of the communicator. Failures throw
// Error where the library reports them; NCCL reports some only later, asynchronously.
#pragma once

#include <cstddef>

#include "qccl/qccl.h"

namespace qccl::coll {

class StreamExchange {
 public:
  virtual ~StreamExchange() = default;

  virtual const char* name() const = 0;
  // Where the buffers handed in may be: the stand-in NCCL of the tests takes host memory, NCCL
  // itself device memory only.
  virtual bool takesHostMemory() const = 0;

  virtual void groupStart() = 0;
  virtual void send(int peer, const void* data, size_t bytes) = 0;
  virtual void recv(int peer, void* data, size_t bytes) = 0;
  virtual void groupEnd() = 0;

  // The library's own exact collectives (NCCL's results, bit for bit).
  virtual void allReduce(const void* send, void* recv, size_t count, qcclDataType_t dtype,
                         qcclRedOp_t op) = 0;
  virtual void reduceScatter(const void* send, void* recv, size_t recvCount, qcclDataType_t dtype,
                             qcclRedOp_t op) = 0;
  virtual void allGather(const void* send, void* recv, size_t sendCount, qcclDataType_t dtype) = 0;
  virtual void broadcast(const void* send, void* recv, size_t count, qcclDataType_t dtype,
                         int root) = 0;
};

}  // namespace qccl::coll
