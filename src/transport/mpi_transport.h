// MPI: MPI_Isend, and receives by matched probe (MPI_Improbe, MPI_Imrecv), on a duplicate of
// MPI_COMM_WORLD, so qccl rides any MPI launcher. qccl's ranks must be the MPI world's ranks. MPI
// is initialised here if the application has not done it (and then finalised at exit).
//
// Receives look at a message's size before they take it: a peer that sends more than expected
// (ranks that disagree on a call) is received into a buffer of its own size and reported, because
// Open MPI 4.1's shared-memory single-copy path (vader, CMA) writes a too-long message past the
// end of the receive buffer instead of truncating it.
#pragma once

#include <mpi.h>

#include <unordered_map>
#include <utility>
#include <vector>

#include "src/transport/receive_queues.h"
#include "src/transport/transport.h"
#include "src/transport/transport_kind.h"

namespace qccl::transport {

class MpiTransport : public Transport {
 public:
  MpiTransport(int rank, int size);
  ~MpiTransport() override;

  const char* name() const override { return transportName(TransportKind::Mpi); }
  Request isend(int peer, uint32_t tag, const void* data, size_t bytes) override;
  Request irecv(int peer, uint32_t tag, void* data, size_t bytes) override;
  bool test(Request request) override;
  void cancel(Request request) override;
  int probe(uint32_t tag) override;
  std::vector<int> pendingPeers() const override;
  void peerLost() override;

  // True when this process runs under an MPI launcher (Open MPI, MPICH/PMI).
  static bool launchedByMpi();
  // MPI_Bcast over MPI_COMM_WORLD from rank 0 (initialising MPI if needed).
  static void broadcastFromRankZero(void* data, size_t bytes);

 private:
  struct Operation {
    std::vector<MPI_Request> parts;  // messages over 1 GiB travel in pieces
    size_t expected = 0;
    size_t received = 0;
    int peer = -1;
    bool isRecv = false;
    // Receives: where the pieces go, how many were matched to a message, and what a message
    // longer than its piece was received into instead.
    char* data = nullptr;
    int tag = 0;
    size_t matched = 0;
    size_t oversized = 0;  // the longest such message, 0: none
    std::vector<std::vector<char>> overflow;
  };
  using Channel = std::pair<int, int>;  // peer, MPI tag

  // Matches the arrived messages of a channel to its receives, oldest receive first.
  void match(const Channel& channel);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int tagMask_ = 0x7FFF;
  std::unordered_map<Request, Operation> operations_;
  ReceiveQueues<Channel> unmatched_;  // receives not yet matched
  Request next_ = 1;
};

}  // namespace qccl::transport
