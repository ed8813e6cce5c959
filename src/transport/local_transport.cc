#include "src/transport/local_transport.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "src/common/error.h"

namespace qccl::transport {

struct LocalWorld {
  std::mutex mutex;
  std::condition_variable joined;
  int size = 0;
  int arrived = 0;  // ranks that ever joined: the rendezvous
  int members = 0;  // ranks still here: the world goes when it reaches 0
  std::vector<bool> alive;
  std::map<std::tuple<int, int, uint32_t>, std::deque<std::vector<uint8_t>>> queues;  // src,dst,tag
};

namespace {

std::mutex registryMutex;
std::map<std::string, std::shared_ptr<LocalWorld>> registry;

constexpr Transport::Request kDone = 0;  // sends complete when posted (the data is copied)

}  // namespace

LocalTransport::LocalTransport(const std::string& key, int rank, int size, const Deadline& deadline)
    : Transport(rank, size), key_(key) {
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    std::shared_ptr<LocalWorld>& w = registry[key];
    if (!w) {
      w = std::make_shared<LocalWorld>();
      w->size = size;
      w->alive.assign(size_t(size), false);
    }
    world_ = w;
  }
  std::unique_lock<std::mutex> lock(world_->mutex);
  if (world_->size != size) {
    throwError(qcclInvalidUsage, "local transport: ranks disagree on the size (%d vs %d)", size,
               world_->size);
  }
  if (world_->alive[size_t(rank)]) {
    throwError(qcclInvalidUsage, "local transport: two ranks claim rank %d", rank);
  }
  world_->alive[size_t(rank)] = true;
  ++world_->members;
  ++world_->arrived;
  world_->joined.notify_all();
  const bool all = world_->joined.wait_for(lock, deadline.remaining(),
                                           [&] { return world_->arrived == world_->size; });
  if (!all) {
    world_->alive[size_t(rank)] = false;
    --world_->members;
    throwError(qcclTimeout, "local transport: only %d of %d ranks joined in time", world_->arrived,
               world_->size);
  }
  hosts_.assign(size_t(size), "localhost");
}

LocalTransport::~LocalTransport() {
  {
    std::lock_guard<std::mutex> lock(world_->mutex);
    world_->alive[size_t(rank())] = false;
    --world_->members;
  }
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry.find(key_);
  if (it != registry.end() && it->second == world_) {
    std::lock_guard<std::mutex> worldLock(world_->mutex);
    if (world_->members == 0) registry.erase(it);
  }
}

Transport::Request LocalTransport::isend(int peer, uint32_t tag, const void* data, size_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  std::lock_guard<std::mutex> lock(world_->mutex);
  if (!world_->alive[size_t(peer)]) {
    throwError(qcclRemoteError, "local transport: rank %d has left", peer);
  }
  world_->queues[{rank(), peer, tag}].emplace_back(p, p + bytes);
  return kDone;
}

Transport::Request LocalTransport::irecv(int peer, uint32_t tag, void* data, size_t bytes) {
  const Request id = next_++;
  receives_.emplace(id, Receive{peer, tag, data, bytes});
  posted_[{peer, tag}].push_back(id);
  return id;
}

void LocalTransport::deliver(int peer, uint32_t tag) {
  auto q = world_->queues.find({peer, rank(), tag});
  auto posted = posted_.find({peer, tag});
  if (q == world_->queues.end() || posted == posted_.end()) return;
  while (!q->second.empty() && !posted->second.empty()) {
    Receive& r = receives_.at(posted->second.front());
    posted->second.pop_front();
    const std::vector<uint8_t>& message = q->second.front();
    r.delivered = true;
    r.sentBytes = message.size();
    if (message.size() == r.bytes) std::memcpy(r.data, message.data(), r.bytes);
    q->second.pop_front();
  }
  if (posted->second.empty()) posted_.erase(posted);
}

bool LocalTransport::test(Request request) {
  if (request == kDone) return true;
  auto it = receives_.find(request);
  if (it == receives_.end()) throwError(qcclInternalError, "local transport: unknown request");
  std::lock_guard<std::mutex> lock(world_->mutex);
  deliver(it->second.peer, it->second.tag);
  const Receive r = it->second;
  if (!r.delivered) {
    if (world_->alive[size_t(r.peer)]) return false;
    cancel(request);
    throwError(qcclRemoteError, "local transport: rank %d left before sending", r.peer);
  }
  receives_.erase(it);
  if (r.sentBytes != r.bytes) {
    throwError(qcclInvalidUsage,
               "rank %d sent %zu bytes where %zu were expected: the ranks disagree on count, "
               "dtype or codec",
               r.peer, r.sentBytes, r.bytes);
  }
  return true;
}

std::vector<int> LocalTransport::pendingPeers() const {
  std::vector<int> peers;
  for (const auto& entry : receives_) peers.push_back(entry.second.peer);
  return peers;
}

bool LocalTransport::peerFailed(int peer) const {
  std::lock_guard<std::mutex> lock(world_->mutex);
  return !world_->alive[size_t(peer)];
}

int LocalTransport::probe(uint32_t tag) {
  std::lock_guard<std::mutex> lock(world_->mutex);
  for (int peer = 0; peer < size(); ++peer) {
    deliver(peer, tag);  // the posted receives take theirs first
    auto q = world_->queues.find({peer, rank(), tag});
    if (q != world_->queues.end() && !q->second.empty()) return peer;
  }
  return -1;
}

void LocalTransport::cancel(Request request) {
  auto it = receives_.find(request);
  if (it == receives_.end()) return;
  dropReceive(posted_, {it->second.peer, it->second.tag}, request);
  receives_.erase(it);
}

}  // namespace qccl::transport
