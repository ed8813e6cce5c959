// A stand-in for libnccl.so.2 in the test suite: the NCCL calls qccl and its interposer make, for
// ranks that are processes, or threads of one process, connected over loopback TCP. With it CI
// runs qccl's NCCL exchange, its stream-ordered schedules and the LD_PRELOAD interposer on host
// memory without a GPU, and a GPU machine runs the device algorithms at several ranks on one GPU
// (which NCCL itself refuses): device buffers are read after their stream's earlier work has
// finished and written before the call returns, so every call has completed when it returns (not
// capturable into a CUDA graph). Calls between ncclGroupStart and ncclGroupEnd run at the group's
// end: first every operation's sends, then its receives, so a group never waits on itself.
// Messages between two ranks match in the order they were sent, as NCCL's operations on one
// communicator do. It exports qcclStandinNcclTakesHostMemory so that qccl lets host buffers
// through to it.
//
// Bootstrap: ncclGetUniqueId listens on a loopback port (the id carries it) and hands every rank
// the others' listening ports once all have said hello; ranks then connect pairwise. A reader
// thread per communicator drains its sockets into per-sender queues, so a send never waits for
// the receiver to post its receive.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if QCCL_STANDIN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "codecs/element/minifloat.h"
#include "src/bootstrap/socket.h"
#include "src/common/error.h"
#include "src/device/memory_kind.h"
#include "src/nccl/nccl_abi.h"

using qccl::Deadline;
using qccl::bootstrap::Socket;
using qccl::nccl::Result;
using qccl::nccl::UniqueId;

namespace {

constexpr Result kSuccess = 0, kSystemError = 2, kInvalidArgument = 4, kInvalidUsage = 5;
constexpr auto kWaitLimit = std::chrono::seconds(60);
constexpr char kIdMagic[] = "standin-tcp";

Deadline waitLimit() { return Deadline::after(kWaitLimit); }

// What a unique id carries: the root's loopback port.
struct IdContents {
  char magic[sizeof kIdMagic];
  uint16_t rootPort;
};
static_assert(sizeof(IdContents) <= sizeof(UniqueId), "the id holds the root's port");

struct Hello {
  int32_t rank;
  int32_t nranks;
  uint16_t port;  // where this rank accepts its higher-ranked peers
};

// Messages to one rank, by sender, in the order they were sent.
struct Mailbox {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<int, std::deque<std::vector<uint8_t>>> from;
  std::map<int, std::string> lost;  // senders whose connection failed, and why
};

struct Comm {
  int rank = 0;
  int size = 0;
  std::vector<Socket> peers;  // by rank; an invalid one for this rank
  Mailbox mailbox;
  int stopPipe[2] = {-1, -1};
  std::thread reader;
};

thread_local std::string lastError;
thread_local int groupDepth = 0;
// Deferred operations of the open group: each posts its sends, then completes its receives.
struct Deferred {
  std::function<Result()> post;
  std::function<Result()> complete;
};
thread_local std::vector<Deferred> group;

Result fail(Result code, const std::string& message) {
  lastError = message;
  return code;
}

#if QCCL_STANDIN_WITH_CUDA
bool onDevice(const void* p) {
  return qccl::device::placementOf(p).kind == qccl::coll::MemoryKind::Device;
}
#endif

// The bytes of a buffer once the work its stream holds has finished.
std::vector<uint8_t> readBytes(const void* data, size_t bytes, cudaStream_t stream) {
  std::vector<uint8_t> copy(bytes);
  if (bytes == 0) return copy;
#if QCCL_STANDIN_WITH_CUDA
  if (onDevice(data)) {
    cudaStreamSynchronize(stream);
    cudaMemcpy(copy.data(), data, bytes, cudaMemcpyDeviceToHost);
    return copy;
  }
#endif
  (void)stream;
  std::memcpy(copy.data(), data, bytes);
  return copy;
}

void writeBytes(void* out, const uint8_t* data, size_t bytes) {
  if (bytes == 0) return;
#if QCCL_STANDIN_WITH_CUDA
  if (onDevice(out)) {
    cudaMemcpy(out, data, bytes, cudaMemcpyHostToDevice);
    return;
  }
#endif
  std::memcpy(out, data, bytes);
}

// The root of one id: waits for every rank's hello, then sends each the table of ports.
void serveRoot(const std::shared_ptr<Socket>& listener) {
  try {
    const Deadline deadline = waitLimit();
    std::vector<Socket> ranks;
    std::vector<uint16_t> ports;
    size_t expected = 1;
    while (ranks.size() < expected) {
      Socket s = qccl::bootstrap::acceptWithin(*listener, deadline);
      Hello hello;
      s.recvAll(&hello, sizeof hello, deadline);
      if (hello.nranks < 1 || hello.rank < 0 || hello.rank >= hello.nranks) return;
      expected = size_t(hello.nranks);
      ports.resize(expected);
      ports[size_t(hello.rank)] = hello.port;
      ranks.push_back(std::move(s));
    }
    for (Socket& s : ranks) s.sendAll(ports.data(), ports.size() * sizeof(uint16_t), deadline);
  } catch (const qccl::Error&) {
    // The ranks see the root go away and fail their init.
  }
}

// Reads length-prefixed messages from every peer into the mailbox until stopped.
void readPeers(Comm* c) {
  std::vector<pollfd> fds{{c->stopPipe[0], POLLIN, 0}};
  std::vector<int> rankOf{-1};
  for (int p = 0; p < c->size; ++p) {
    if (p == c->rank) continue;
    fds.push_back({c->peers[size_t(p)].fd(), POLLIN, 0});
    rankOf.push_back(p);
  }
  for (;;) {
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    if (fds[0].revents) return;
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      const int p = rankOf[i];
      const Socket& s = c->peers[size_t(p)];
      try {
        uint64_t bytes = 0;
        s.recvAll(&bytes, sizeof bytes, waitLimit());
        std::vector<uint8_t> message(bytes);
        s.recvAll(message.data(), bytes, waitLimit());
        std::lock_guard<std::mutex> lock(c->mailbox.mutex);
        c->mailbox.from[p].push_back(std::move(message));
        c->mailbox.changed.notify_all();
      } catch (const qccl::Error& e) {
        std::lock_guard<std::mutex> lock(c->mailbox.mutex);
        c->mailbox.lost[p] = e.what();
        c->mailbox.changed.notify_all();
        fds[i].fd = -1;  // poll skips it from now on
      }
    }
  }
}

// Connects this rank to every other: the ranks below it accept, the ranks above it connect.
void connectPeers(Comm& c, const IdContents& id, int nranks, int rank) {
  const Deadline deadline = waitLimit();
  Socket listener = qccl::bootstrap::listenOn(qccl::bootstrap::resolveHost("127.0.0.1", 0));
  Socket root = qccl::bootstrap::connectWithin(
      qccl::bootstrap::resolveHost("127.0.0.1", id.rootPort), deadline);
  const Hello hello{rank, nranks, qccl::bootstrap::boundAddress(listener).port()};
  root.sendAll(&hello, sizeof hello, deadline);
  std::vector<uint16_t> ports(static_cast<size_t>(nranks));
  root.recvAll(ports.data(), ports.size() * sizeof(uint16_t), deadline);
  c.peers.resize(size_t(nranks));
  for (int p = 0; p < rank; ++p) {
    Socket s = qccl::bootstrap::connectWithin(
        qccl::bootstrap::resolveHost("127.0.0.1", ports[size_t(p)]), deadline);
    s.sendAll(&rank, sizeof rank, deadline);
    c.peers[size_t(p)] = std::move(s);
  }
  for (int n = rank + 1; n < nranks; ++n) {
    Socket s = qccl::bootstrap::acceptWithin(listener, deadline);
    int32_t peer = -1;
    s.recvAll(&peer, sizeof peer, deadline);
    if (peer <= rank || peer >= nranks) {
      qccl::throwError(qcclInternalError, "a peer said it is rank %d", peer);
    }
    c.peers[size_t(peer)] = std::move(s);
  }
}

Result deposit(Comm& c, int to, const std::vector<uint8_t>& message) {
  try {
    const uint64_t bytes = message.size();
    const Socket& s = c.peers[size_t(to)];
    s.sendAll(&bytes, sizeof bytes, waitLimit());
    s.sendAll(message.data(), message.size(), waitLimit());
    return kSuccess;
  } catch (const qccl::Error& e) {
    return fail(kSystemError, std::string("stand-in NCCL: send: ") + e.what());
  }
}

// The message to every other rank.
Result depositToAll(Comm& c, const std::vector<uint8_t>& message) {
  for (int p = 0; p < c.size; ++p) {
    if (p == c.rank) continue;
    if (Result r = deposit(c, p, message); r != kSuccess) return r;
  }
  return kSuccess;
}

// The next message from `from` into host memory.
Result takeInto(Comm& c, int from, std::vector<uint8_t>& message, size_t bytes) {
  std::unique_lock<std::mutex> lock(c.mailbox.mutex);
  auto& queue = c.mailbox.from[from];
  if (!c.mailbox.changed.wait_for(
          lock, kWaitLimit, [&] { return !queue.empty() || c.mailbox.lost.count(from) != 0; })) {
    return fail(kSystemError, "stand-in NCCL: rank " + std::to_string(c.rank) +
                                  " waited 60 s for a message from rank " + std::to_string(from));
  }
  if (queue.empty()) {
    return fail(kSystemError, "stand-in NCCL: rank " + std::to_string(from) +
                                  " is gone: " + c.mailbox.lost[from]);
  }
  std::vector<uint8_t> got = std::move(queue.front());
  queue.pop_front();
  if (got.size() != bytes) {
    return fail(kInvalidUsage, "stand-in NCCL: rank " + std::to_string(from) + " sent " +
                                   std::to_string(got.size()) + " bytes, rank " +
                                   std::to_string(c.rank) + " expected " + std::to_string(bytes));
  }
  message = std::move(got);
  return kSuccess;
}

// The next message from `from` into the buffer at data.
Result take(Comm& c, int from, void* data, size_t bytes) {
  std::vector<uint8_t> message;
  const Result r = takeInto(c, from, message, bytes);
  if (r == kSuccess) writeBytes(data, message.data(), bytes);
  return r;
}

// Runs op now, or at the end of the open group.
Result run(Deferred op) {
  if (groupDepth > 0) {
    group.push_back(std::move(op));
    return kSuccess;
  }
  const Result posted = op.post();
  const Result completed = op.complete();
  return posted != kSuccess ? posted : completed;
}

size_t typeBytes(int dtype) {
  switch (dtype) {
    case 0:
    case 1:
    case 10:
    case 11: return 1;
    case 6:
    case 9: return 2;
    case 2:
    case 3:
    case 7: return 4;
    default: return 8;
  }
}

double load(int dtype, const uint8_t* p) {
  switch (dtype) {
    case 0: return double(*reinterpret_cast<const int8_t*>(p));
    case 1: return double(*p);
    case 2: return double(*reinterpret_cast<const int32_t*>(p));
    case 3: return double(*reinterpret_cast<const uint32_t*>(p));
    case 4: return double(*reinterpret_cast<const int64_t*>(p));
    case 5: return double(*reinterpret_cast<const uint64_t*>(p));
    case 6: return qccl::decode<qccl::Fp16>(*reinterpret_cast<const uint16_t*>(p));
    case 7: return *reinterpret_cast<const float*>(p);
    case 8: return *reinterpret_cast<const double*>(p);
    default: return qccl::decode<qccl::Bf16>(*reinterpret_cast<const uint16_t*>(p));
  }
}

void store(int dtype, double v, uint8_t* p) {
  switch (dtype) {
    case 0: *reinterpret_cast<int8_t*>(p) = int8_t(int64_t(v)); break;
    case 1: *p = uint8_t(int64_t(v)); break;
    case 2: *reinterpret_cast<int32_t*>(p) = int32_t(int64_t(v)); break;
    case 3: *reinterpret_cast<uint32_t*>(p) = uint32_t(int64_t(v)); break;
    case 4: *reinterpret_cast<int64_t*>(p) = int64_t(v); break;
    case 5: *reinterpret_cast<uint64_t*>(p) = uint64_t(v); break;
    case 6:
      *reinterpret_cast<uint16_t*>(p) = uint16_t(qccl::encodeRne<qccl::Fp16>(float(v)));
      break;
    case 7: *reinterpret_cast<float*>(p) = float(v); break;
    case 8: *reinterpret_cast<double*>(p) = v; break;
    default: *reinterpret_cast<uint16_t*>(p) = uint16_t(qccl::encodeRne<qccl::Bf16>(float(v)));
  }
}

// The n contributions (rank order) reduced element by element in double, into out.
void reduce(const std::vector<std::vector<uint8_t>>& in, size_t count, int dtype, int op,
            void* result) {
  const size_t w = typeBytes(dtype);
  std::vector<uint8_t> reduced(count * w);
  uint8_t* out = reduced.data();
  for (size_t i = 0; i < count; ++i) {
    double acc = load(dtype, in[0].data() + i * w);
    for (size_t r = 1; r < in.size(); ++r) {
      const double v = load(dtype, in[r].data() + i * w);
      acc = op == 1   ? acc * v
            : op == 2 ? (v > acc ? v : acc)
            : op == 3 ? (v < acc ? v : acc)
                      : acc + v;
    }
    if (op == 4)
      acc = dtype <= 5 ? double(int64_t(acc) / int64_t(in.size())) : acc / double(in.size());
    store(dtype, acc, out + i * w);
  }
  writeBytes(result, reduced.data(), reduced.size());
}

// Every rank's `bytes` from `data`, in rank order (the own one copied).
struct Gathered {
  std::vector<std::vector<uint8_t>> all;
};

// The buffer is read when the operation runs (as NCCL reads it in stream order), not when it is
// called.
Deferred gatherAll(Comm* c, const void* data, size_t bytes, cudaStream_t stream,
                   std::shared_ptr<Gathered> g) {
  return {[c, data, bytes, stream, g] {
            g->all.assign(size_t(c->size), {});
            g->all[size_t(c->rank)] = readBytes(data, bytes, stream);
            return depositToAll(*c, g->all[size_t(c->rank)]);
          },
          [c, g, bytes] {
            for (int p = 0; p < c->size; ++p) {
              if (p == c->rank) continue;
              if (Result r = takeInto(*c, p, g->all[size_t(p)], bytes); r != kSuccess) return r;
            }
            return kSuccess;
          }};
}

Comm* commOf(void* comm) { return static_cast<Comm*>(comm); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int qcclStandinNcclTakesHostMemory = 1;

Result ncclGetVersion(int* version) {
  *version = 22800;
  return kSuccess;
}

// Starts the root of a new id: a loopback listener that serves the ranks' hellos.
Result ncclGetUniqueId(UniqueId* id) {
  std::memset(id->internal, 0, sizeof id->internal);
  try {
    auto listener = std::make_shared<Socket>(
        qccl::bootstrap::listenOn(qccl::bootstrap::resolveHost("127.0.0.1", 0)));
    IdContents contents{};
    std::memcpy(contents.magic, kIdMagic, sizeof kIdMagic);
    contents.rootPort = qccl::bootstrap::boundAddress(*listener).port();
    std::memcpy(id->internal, &contents, sizeof contents);
    std::thread(serveRoot, listener).detach();
    return kSuccess;
  } catch (const qccl::Error& e) {
    return fail(kSystemError, std::string("stand-in NCCL: ncclGetUniqueId: ") + e.what());
  }
}

Result ncclCommInitRank(void** comm, int nranks, UniqueId id, int rank) {
  IdContents contents;
  std::memcpy(&contents, id.internal, sizeof contents);
  if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks ||
      std::memcmp(contents.magic, kIdMagic, sizeof kIdMagic) != 0) {
    return fail(kInvalidArgument, "stand-in NCCL: bad ncclCommInitRank arguments");
  }
  auto c = std::make_unique<Comm>();
  c->rank = rank;
  c->size = nranks;
  try {
    connectPeers(*c, contents, nranks, rank);
  } catch (const qccl::Error& e) {
    return fail(kSystemError, std::string("stand-in NCCL: ncclCommInitRank: ") + e.what());
  }
  if (pipe(c->stopPipe) != 0) return fail(kSystemError, "stand-in NCCL: pipe failed");
  c->reader = std::thread(readPeers, c.get());
  *comm = c.release();
  return kSuccess;
}

Result ncclCommDestroy(void* comm) {
  Comm* c = commOf(comm);
  if (c == nullptr) return fail(kInvalidArgument, "stand-in NCCL: comm is NULL");
  const char stop = 1;
  if (write(c->stopPipe[1], &stop, 1) != 1) return fail(kSystemError, "stand-in NCCL: stop");
  c->reader.join();
  close(c->stopPipe[0]);
  close(c->stopPipe[1]);
  delete c;
  return kSuccess;
}

Result ncclCommAbort(void* comm) { return ncclCommDestroy(comm); }

Result ncclCommCount(void* comm, int* count) {
  *count = commOf(comm)->size;
  return kSuccess;
}

Result ncclCommUserRank(void* comm, int* rank) {
  *rank = commOf(comm)->rank;
  return kSuccess;
}

Result ncclCommGetAsyncError(void*, Result* error) {
  *error = kSuccess;
  return kSuccess;
}

const char* ncclGetErrorString(Result result) {
  switch (result) {
    case kSuccess: return "no error";
    case kSystemError: return "unhandled system error";
    case kInvalidArgument: return "invalid argument";
    case kInvalidUsage: return "invalid usage";
    default: return "error";
  }
}

const char* ncclGetLastError(void*) { return lastError.c_str(); }

Result ncclGroupStart() {
  ++groupDepth;
  return kSuccess;
}

Result ncclGroupEnd() {
  if (groupDepth == 0) return fail(kInvalidUsage, "stand-in NCCL: ncclGroupEnd without start");
  if (--groupDepth > 0) return kSuccess;
  std::vector<Deferred> ops = std::move(group);
  group.clear();
  Result result = kSuccess;
  for (Deferred& op : ops) {
    if (Result r = op.post(); r != kSuccess && result == kSuccess) result = r;
  }
  for (Deferred& op : ops) {
    if (Result r = op.complete(); r != kSuccess && result == kSuccess) result = r;
  }
  return result;
}

Result ncclSend(const void* data, size_t count, int dtype, int peer, void* comm,
                cudaStream_t stream) {
  Comm* c = commOf(comm);
  const size_t bytes = count * typeBytes(dtype);
  return run(
      {[c, peer, data, bytes, stream] { return deposit(*c, peer, readBytes(data, bytes, stream)); },
       [] { return kSuccess; }});
}

Result ncclRecv(void* data, size_t count, int dtype, int peer, void* comm, cudaStream_t) {
  Comm* c = commOf(comm);
  const size_t bytes = count * typeBytes(dtype);
  return run(
      {[] { return kSuccess; }, [c, peer, data, bytes] { return take(*c, peer, data, bytes); }});
}

Result ncclAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void* comm,
                     cudaStream_t stream) {
  Comm* c = commOf(comm);
  auto g = std::make_shared<Gathered>();
  Deferred gather = gatherAll(c, send, count * typeBytes(dtype), stream, g);
  return run({gather.post, [=] {
                if (Result r = gather.complete(); r != kSuccess) return r;
                reduce(g->all, count, dtype, op, static_cast<uint8_t*>(recv));
                return kSuccess;
              }});
}

Result ncclReduceScatter(const void* send, void* recv, size_t recvCount, int dtype, int op,
                         void* comm, cudaStream_t stream) {
  Comm* c = commOf(comm);
  auto g = std::make_shared<Gathered>();
  const size_t w = typeBytes(dtype);
  Deferred gather = gatherAll(c, send, recvCount * w * size_t(c->size), stream, g);
  return run({gather.post, [=] {
                if (Result r = gather.complete(); r != kSuccess) return r;
                std::vector<std::vector<uint8_t>> shares;
                for (const auto& all : g->all) {
                  const uint8_t* share = all.data() + size_t(c->rank) * recvCount * w;
                  shares.emplace_back(share, share + recvCount * w);
                }
                reduce(shares, recvCount, dtype, op, static_cast<uint8_t*>(recv));
                return kSuccess;
              }});
}

Result ncclAllGather(const void* send, void* recv, size_t sendCount, int dtype, void* comm,
                     cudaStream_t stream) {
  Comm* c = commOf(comm);
  auto g = std::make_shared<Gathered>();
  const size_t bytes = sendCount * typeBytes(dtype);
  Deferred gather = gatherAll(c, send, bytes, stream, g);
  return run({gather.post, [=] {
                if (Result r = gather.complete(); r != kSuccess) return r;
                for (size_t p = 0; p < g->all.size(); ++p) {
                  writeBytes(static_cast<uint8_t*>(recv) + p * bytes, g->all[p].data(), bytes);
                }
                return kSuccess;
              }});
}

Result ncclBroadcast(const void* send, void* recv, size_t count, int dtype, int root, void* comm,
                     cudaStream_t stream) {
  Comm* c = commOf(comm);
  const size_t bytes = count * typeBytes(dtype);
  if (c->rank == root) {
    auto data = std::make_shared<std::vector<uint8_t>>();
    return run({[c, send, bytes, stream, data] {
                  *data = readBytes(send, bytes, stream);
                  return depositToAll(*c, *data);
                },
                [send, recv, data] {
                  if (send != recv) writeBytes(recv, data->data(), data->size());
                  return kSuccess;
                }});
  }
  return run(
      {[] { return kSuccess; }, [c, root, recv, bytes] { return take(*c, root, recv, bytes); }});
}

}  // extern "C"
