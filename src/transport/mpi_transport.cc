#include "src/transport/mpi_transport.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "src/common/error.h"
#include "src/common/host_name.h"
#include "src/common/log.h"
#include "src/common/params.h"

namespace qccl::transport {

namespace {

constexpr size_t kPieceBytes = size_t(1) << 30;

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, size_t(length));
}

// Set once a call on any MPI communicator lost a peer (Transport::peerLost).
std::atomic<bool> lostPeer{false};

// At exit, for the MPI qccl initialised. MPI_Finalize waits for every process of the job, and
// one that died never arrives (Open MPI 4.1 under `mpirun --enable-recovery` waits forever: the
// fault matrix, docs/RELIABILITY.md). One that merely left early is waiting there already, or
// arrives once its peers' calls have timed out. So: after a lost peer, wait 5 s; else up to twice
// QCCL_TIMEOUT and 5 s; then leave without it, with exit status 1 and a line that says why.
void finalizeWithin() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  int64_t seconds = 300;
  try {
    seconds = paramInt(params::kTimeout);
  } catch (const Error&) {
  }
  const std::chrono::seconds limit(lostPeer.load() ? 5 : 2 * seconds + 5);
  std::thread([limit] {
    std::this_thread::sleep_for(limit);
    std::fprintf(stderr,
                 "qccl: MPI_Finalize did not return within %lld s (a process of the job is gone); "
                 "exiting without it\n",
                 static_cast<long long>(limit.count()));
    _exit(1);
  }).detach();
  MPI_Finalize();
}

void ensureMpiInitialised() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return;
  int provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (rc != MPI_SUCCESS)
    throwError(qcclSystemError, "MPI_Init_thread: %s", mpiErrorText(rc).c_str());
  std::atexit(finalizeWithin);
}

}  // namespace

bool MpiTransport::launchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

void MpiTransport::broadcastFromRankZero(void* data, size_t bytes) {
  ensureMpiInitialised();
  const int rc = MPI_Bcast(data, int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) throwError(qcclSystemError, "MPI_Bcast: %s", mpiErrorText(rc).c_str());
}

MpiTransport::MpiTransport(int rank, int size) : Transport(rank, size) {
  ensureMpiInitialised();
  int worldRank = 0, worldSize = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (worldRank != rank || worldSize != size) {
    throwError(qcclInvalidUsage,
               "mpi transport: qccl rank %d of %d must be the MPI world's rank %d of %d", rank,
               size, worldRank, worldSize);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int* upperBound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &upperBound, &found);
  if (found && upperBound) tagMask_ = *upperBound >= 0x7FFFFFFF ? 0x7FFFFFFF : 0x7FFF;
  char host[256] = "";
  hostName().copy(host, sizeof host - 1);
  std::vector<char> all(size_t(size) * sizeof host);
  MPI_Allgather(host, sizeof host, MPI_CHAR, all.data(), sizeof host, MPI_CHAR, comm_);
  for (int p = 0; p < size; ++p) hosts_.emplace_back(all.data() + size_t(p) * sizeof host);
  QCCL_INFO(kLogTransport, "mpi: rank %d of %d", rank, size);
}

MpiTransport::~MpiTransport() {
  for (auto& entry : operations_) {
    for (MPI_Request& r : entry.second.parts) {
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Request_free(&r);
      }
    }
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

namespace {

size_t pieceCount(size_t bytes) { return bytes == 0 ? 1 : (bytes + kPieceBytes - 1) / kPieceBytes; }

}  // namespace

Transport::Request MpiTransport::isend(int peer, uint32_t tag, const void* data, size_t bytes) {
  Operation op;
  op.expected = bytes;
  op.peer = peer;
  const int mpiTag = int(tag & uint32_t(tagMask_));
  const auto* p = static_cast<const char*>(data);
  for (size_t k = 0; k < pieceCount(bytes); ++k) {
    const size_t offset = k * kPieceBytes;
    const int piece = int(bytes - offset < kPieceBytes ? bytes - offset : kPieceBytes);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Isend(p + offset, piece, MPI_BYTE, peer, mpiTag, comm_, &r);
    if (rc != MPI_SUCCESS) {
      throwError(qcclRemoteError, "mpi: MPI_Isend to rank %d: %s", peer, mpiErrorText(rc).c_str());
    }
    op.parts.push_back(r);
  }
  const Request id = next_++;
  operations_.emplace(id, std::move(op));
  return id;
}

Transport::Request MpiTransport::irecv(int peer, uint32_t tag, void* data, size_t bytes) {
  Operation op;
  op.expected = bytes;
  op.peer = peer;
  op.isRecv = true;
  op.data = static_cast<char*>(data);
  op.tag = int(tag & uint32_t(tagMask_));
  const Request id = next_++;
  unmatched_[{peer, op.tag}].push_back(id);
  operations_.emplace(id, std::move(op));
  return id;
}

void MpiTransport::match(const Channel& channel) {
  auto queue = unmatched_.find(channel);
  while (queue != unmatched_.end() && !queue->second.empty()) {
    Operation& op = operations_.at(queue->second.front());
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int rc = MPI_Improbe(channel.first, channel.second, comm_, &flag, &message, &status);
    if (rc != MPI_SUCCESS) {
      throwError(qcclRemoteError, "mpi: MPI_Improbe from rank %d: %s", op.peer,
                 mpiErrorText(rc).c_str());
    }
    if (!flag) return;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    const size_t offset = op.matched * kPieceBytes;
    const size_t piece = op.expected - offset < kPieceBytes ? op.expected - offset : kPieceBytes;
    char* into = op.data + offset;
    if (size_t(count) > piece) {  // taken whole, so that it is neither left behind nor overrun
      op.overflow.emplace_back(size_t(count));
      into = op.overflow.back().data();
      op.oversized = std::max(op.oversized, size_t(count));
    }
    MPI_Request r = MPI_REQUEST_NULL;
    rc = MPI_Imrecv(into, count, MPI_BYTE, &message, &r);
    if (rc != MPI_SUCCESS) {
      throwError(qcclRemoteError, "mpi: MPI_Imrecv from rank %d: %s", op.peer,
                 mpiErrorText(rc).c_str());
    }
    op.parts.push_back(r);
    if (++op.matched < pieceCount(op.expected)) continue;
    queue->second.pop_front();
    if (queue->second.empty()) {  // every phase has channels of its own tag: drop the spent ones
      unmatched_.erase(queue);
      return;
    }
  }
}

bool MpiTransport::test(Request request) {
  auto it = operations_.find(request);
  if (it == operations_.end()) throwError(qcclInternalError, "mpi: unknown request");
  if (it->second.isRecv && it->second.matched < pieceCount(it->second.expected)) {
    match({it->second.peer, it->second.tag});
    if (it->second.matched < pieceCount(it->second.expected)) return false;
  }
  Operation& op = it->second;
  bool all = true;
  for (MPI_Request& part : op.parts) {
    if (part == MPI_REQUEST_NULL) continue;  // finished earlier
    int flag = 0;
    MPI_Status status;
    // MPI_Test reports errors in its return code (status.MPI_ERROR is only set by the
    // multiple-completion calls); the communicator returns errors instead of aborting.
    const int rc = MPI_Test(&part, &flag, &status);
    if (rc != MPI_SUCCESS) {
      const Operation failed = op;
      cancel(request);
      throwError(qcclRemoteError, "mpi: operation with rank %d failed: %s", failed.peer,
                 mpiErrorText(rc).c_str());
    }
    if (!flag) {
      all = false;
      continue;
    }
    if (op.isRecv) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      op.received += size_t(count);
    }
  }
  if (!all) return false;
  const Operation finished = op;
  operations_.erase(it);
  if (finished.oversized > 0) {
    throwError(qcclInvalidUsage,
               "rank %d sent a message of %zu bytes where %zu were expected: the ranks disagree "
               "on count, dtype or codec",
               finished.peer, finished.oversized, finished.expected);
  }
  if (finished.isRecv && finished.received != finished.expected) {
    throwError(qcclInvalidUsage,
               "rank %d sent %zu bytes where %zu were expected: the ranks disagree on count, "
               "dtype or codec",
               finished.peer, finished.received, finished.expected);
  }
  return true;
}

std::vector<int> MpiTransport::pendingPeers() const {
  std::vector<int> peers;
  for (const auto& entry : operations_) peers.push_back(entry.second.peer);
  return peers;
}

int MpiTransport::probe(uint32_t tag) {
  const int mpiTag = int(tag & uint32_t(tagMask_));
  // Receives match when tested: let the posted ones of this tag take their messages first.
  std::vector<Channel> posted;
  for (const auto& entry : unmatched_) {
    if (entry.first.second == mpiTag) posted.push_back(entry.first);
  }
  for (const Channel& channel : posted) match(channel);
  int flag = 0;
  MPI_Status status;
  const int rc = MPI_Iprobe(MPI_ANY_SOURCE, mpiTag, comm_, &flag, &status);
  if (rc != MPI_SUCCESS) {
    throwError(qcclRemoteError, "mpi: MPI_Iprobe from any rank: %s", mpiErrorText(rc).c_str());
  }
  return flag ? status.MPI_SOURCE : -1;
}

void MpiTransport::peerLost() { lostPeer.store(true); }

void MpiTransport::cancel(Request request) {
  auto it = operations_.find(request);
  if (it == operations_.end()) return;
  if (it->second.isRecv) dropReceive(unmatched_, {it->second.peer, it->second.tag}, request);
  for (MPI_Request& r : it->second.parts) {
    if (r != MPI_REQUEST_NULL) {
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
  }
  operations_.erase(it);
}

}  // namespace qccl::transport
