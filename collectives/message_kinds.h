// What a collective's message is, written into exact-message headers and call descriptions so a
// receiver can tell that its peer is in the same step of the same collective. The numeric values
// travel on the wire: append only.
#pragma once

#include <cstdint>

namespace qccl::coll {

enum class MessageKind : uint8_t {
  ExactContribution = 1,  // exact allreduce: a chunk of a rank's vector to its owner
  ExactResult = 2,        // exact allreduce: the owner's reduced chunk to everyone
  HierSlice = 3,          // hier: a slice to its owner inside the group
  HierReducedSlice = 4,   // hier: the reduced slice back to the group
  ExactShare = 5,         // exact reduce-scatter
  ExactShard = 6,         // exact allgather
  Broadcast = 7,
  AlltoallBlock = 8,
  Barrier = 9,
  SraCall = 10,                 // call agreement of the compressed allreduce
  ReduceScatterCall = 11,       // ... of the compressed reduce-scatter
  AllgatherCall = 12,           // ... of the compressed allgather
  GatherAllreduceCall = 13,     // ... of the compressed allreduce by allgather
  DeltaAllgatherCall = 14,      // ... of the compressed allgather of changes
  ExactVector = 15,             // exact allreduce in one round: a rank's whole vector to everyone
  ExactAllreduceCall = 16,      // call agreement of the pipelined exact allreduce
  ExactReduceScatterCall = 17,  // ... of the pipelined exact reduce-scatter
  ExactAllgatherCall = 18,      // ... of the pipelined exact allgather
  ExactPartial = 19,            // exact allreduce by recursive doubling: a block's partial result
  ExactHalf = 20,     // ... by recursive halving: the half of a partial result the partner keeps
  PointToPoint = 21,  // qcclSend / qcclRecv
  GatherBlock = 22,   // qcclGather: a rank's block to the root
  ScatterBlock = 23,  // qcclScatter: the root's block p to rank p
};

}  // namespace qccl::coll
