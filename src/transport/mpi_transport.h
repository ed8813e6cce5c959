// MPI: MPI_Isend / MPI_Irecv on a duplicate of MPI_COMM_WORLD, so qccl rides any MPI launcher.
// qccl's ranks must be the MPI world's ranks. MPI is initialised here if the application has not
// done it (and then finalised at exit).
#pragma once

#include <mpi.h>

#include <unordered_map>
#include <vector>

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
  };
  Request post(int peer, uint32_t tag, void* data, size_t bytes, bool isRecv);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int tagMask_ = 0x7FFF;
  std::unordered_map<Request, Operation> operations_;
  Request next_ = 1;
};

}  // namespace qccl::transport
