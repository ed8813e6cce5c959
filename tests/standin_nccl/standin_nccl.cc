// A stand-in for libnccl.so.2 in the test suite: the NCCL calls qccl makes, for ranks that are
// threads of one process. With it CI runs qccl's NCCL exchange and its stream-ordered schedules
// on host memory without a GPU, and a GPU machine runs the device algorithms at several ranks on
// one GPU (which NCCL itself refuses): device buffers are read after their stream's earlier work
// has finished and written before the call returns, so every call has completed when it returns
// (not capturable into a CUDA graph). Calls between ncclGroupStart and ncclGroupEnd run at the
// group's end: first every operation's sends, then its receives, so a group never waits on itself.
// Messages between two ranks match in the order they were sent, as NCCL's operations on one
// communicator do. It exports qcclStandinNcclTakesHostMemory so that qccl lets host buffers through
// to it.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#if QCCL_STANDIN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "codecs/element/minifloat.h"
#include "src/device/memory_kind.h"
#include "src/nccl/nccl_abi.h"

using qccl::nccl::Result;
using qccl::nccl::UniqueId;

namespace {

constexpr Result kSuccess = 0, kSystemError = 2, kInvalidArgument = 4, kInvalidUsage = 5;
constexpr auto kWaitLimit = std::chrono::seconds(60);

struct World {
  int size = 0;
  std::mutex mutex;
  std::condition_variable changed;
  int joined = 0;
  std::map<std::pair<int, int>, std::deque<std::vector<uint8_t>>> mail;  // (from, to)
};

struct Comm {
  std::shared_ptr<World> world;
  int rank;
  int size;
};

std::mutex worldsMutex;
std::map<std::string, std::shared_ptr<World>> worlds;

thread_local std::string lastError;
thread_local int groupDepth = 0;
// Deferred operations of the open group: each posts its sends, then completes its receives.
struct Deferred {
  std::function<Result()> post;
  std::function<Result()> complete;
};
thread_local std::vector<Deferred> group;

bool onDevice(const void* p) {
  return qccl::device::placementOf(p).kind == qccl::coll::MemoryKind::Device;
}

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

Result fail(Result code, const std::string& message) {
  lastError = message;
  return code;
}

void deposit(Comm& c, int to, std::vector<uint8_t> message) {
  std::lock_guard<std::mutex> lock(c.world->mutex);
  c.world->mail[{c.rank, to}].push_back(std::move(message));
  c.world->changed.notify_all();
}

// The next message from `from` into host memory.
Result takeInto(Comm& c, int from, std::vector<uint8_t>& message, size_t bytes) {
  message.resize(bytes);
  std::unique_lock<std::mutex> lock(c.world->mutex);
  auto& queue = c.world->mail[{from, c.rank}];
  if (!c.world->changed.wait_for(lock, kWaitLimit, [&] { return !queue.empty(); })) {
    return fail(kSystemError, "stand-in NCCL: rank " + std::to_string(c.rank) +
                                  " waited 60 s for a message from rank " + std::to_string(from));
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
            for (int p = 0; p < c->size; ++p) {
              if (p != c->rank) deposit(*c, p, g->all[size_t(c->rank)]);
            }
            return kSuccess;
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

Result ncclGetUniqueId(UniqueId* id) {
  std::memset(id->internal, 0, sizeof id->internal);
  std::random_device rd;
  const std::string tag = "standin:" + std::to_string(rd()) + ":" + std::to_string(rd());
  std::memcpy(id->internal, tag.data(), tag.size());
  return kSuccess;
}

Result ncclCommInitRank(void** comm, int nranks, UniqueId id, int rank) {
  if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(kInvalidArgument, "stand-in NCCL: bad ncclCommInitRank arguments");
  }
  const std::string key(id.internal, strnlen(id.internal, sizeof id.internal));
  std::shared_ptr<World> world;
  {
    std::lock_guard<std::mutex> lock(worldsMutex);
    std::shared_ptr<World>& w = worlds[key];
    if (!w) {
      w = std::make_shared<World>();
      w->size = nranks;
    }
    world = w;
  }
  std::unique_lock<std::mutex> lock(world->mutex);
  if (world->size != nranks) return fail(kInvalidUsage, "stand-in NCCL: ranks disagree on size");
  ++world->joined;
  world->changed.notify_all();
  if (!world->changed.wait_for(lock, kWaitLimit, [&] { return world->joined >= nranks; })) {
    return fail(kSystemError, "stand-in NCCL: not every rank joined within 60 s");
  }
  *comm = new Comm{world, rank, nranks};
  return kSuccess;
}

Result ncclCommDestroy(void* comm) {
  delete commOf(comm);
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
  return run({[c, peer, data, bytes, stream] {
                deposit(*c, peer, readBytes(data, bytes, stream));
                return kSuccess;
              },
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
                  for (int p = 0; p < c->size; ++p) {
                    if (p != c->rank) deposit(*c, p, *data);
                  }
                  return kSuccess;
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
