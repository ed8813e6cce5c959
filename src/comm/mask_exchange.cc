#include "src/comm/mask_exchange.h"

#include <cstring>

#include "src/comm/p2p_calls.h"
#include "src/common/error.h"

namespace qccl {

namespace {

constexpr uint64_t kPositionsForm = 1ull << 63;

size_t bitmapBytes(size_t bits) { return (bits + 7) / 8; }

bool getBit(const uint8_t* bits, size_t i) { return (bits[i / 8] >> (i % 8)) & 1u; }

void setBit(uint8_t* bits, size_t i, bool on) {
  const uint8_t b = uint8_t(1u << (i % 8));
  bits[i / 8] = on ? uint8_t(bits[i / 8] | b) : uint8_t(bits[i / 8] & ~b);
}

P2pMessage bytesMessage(bool send, void* buffer, size_t bytes, int peer, uint32_t tag) {
  P2pMessage m;
  m.send = send;
  m.buffer = buffer;
  m.count = bytes;
  m.dtype = qcclUint8;
  m.peer = peer;
  m.tag = tag;
  return m;
}

}  // namespace

MaskExchange::MaskExchange(qcclComm& comm, const uint8_t* shardMask, uint8_t* mask, size_t shard,
                           uint32_t tag)
    : comm_(comm), mask_(mask), shard_(shard), tag_(tag) {
  if (shard != 0 && (shardMask == nullptr || mask == nullptr)) {
    throwError(qcclInvalidArgument, "mask exchange: %s is NULL",
               shardMask == nullptr ? "shardMask" : "mask");
  }
  // This rank's body: its set positions (uint32 each) where fewer bytes than the bitmap.
  std::vector<uint32_t> positions;
  for (size_t i = 0; i < shard; ++i) {
    if (getBit(shardMask, i)) positions.push_back(uint32_t(i));
  }
  const bool asPositions = shard <= UINT32_MAX && positions.size() * 4 < bitmapBytes(shard);
  std::vector<uint8_t> body(asPositions ? positions.size() * 4 : bitmapBytes(shard));
  std::memcpy(body.data(), asPositions ? static_cast<const void*>(positions.data()) : shardMask,
              body.size());
  uint64_t header = body.size() | (asPositions ? kPositionsForm : 0);
  const size_t base = size_t(comm.rank) * shard;
  for (size_t i = 0; i < shard; ++i) setBit(mask, base + i, getBit(shardMask, i));
  try {
    for (int r = 0; r < comm.nranks; ++r) {
      if (r == comm.rank) continue;
      // Sends are copied when posted; the peer's receives match them in posting order.
      sends_.push_back(postMessage(comm, bytesMessage(true, &header, sizeof header, r, tag)));
      if (!body.empty()) {
        sends_.push_back(postMessage(comm, bytesMessage(true, body.data(), body.size(), r, tag)));
      }
      Peer peer;
      peer.rank = r;
      peers_.push_back(std::move(peer));
    }
    for (Peer& p : peers_) {
      p.headerId = postMessage(comm, bytesMessage(false, &p.header, sizeof p.header, p.rank, tag));
    }
  } catch (...) {
    for (uint64_t id : sends_) cancelMessage(comm_, id);
    for (Peer& p : peers_) {
      if (p.headerId) cancelMessage(comm_, p.headerId);
    }
    throw;
  }
}

MaskExchange::~MaskExchange() {
  for (Peer& p : peers_) {
    if (p.done) continue;
    if (!p.headerDone && p.headerId) cancelMessage(comm_, p.headerId);
    if (p.bodyPosted) cancelMessage(comm_, p.bodyId);
  }
  for (uint64_t id : sends_) cancelMessage(comm_, id);
}

void MaskExchange::progress(Peer& p) {
  if (!p.headerDone) return;
  const size_t bytes = size_t(p.header & ~kPositionsForm);
  const bool positions = p.header & kPositionsForm;
  if (positions ? bytes % 4 != 0 : bytes != bitmapBytes(shard_)) {
    throwError(qcclInvalidUsage,
               "mask exchange: rank %d sent a %zu-byte mask where a shard of %zu elements was "
               "expected (do the ranks agree on the shard size?)",
               p.rank, bytes, shard_);
  }
  if (!p.bodyPosted) {
    p.body.resize(bytes);
    p.bodyPosted = true;
    if (bytes == 0) {
      p.done = true;
      return place(p);
    }
    p.bodyId = postMessage(comm_, bytesMessage(false, p.body.data(), bytes, p.rank, tag_));
  }
}

void MaskExchange::place(const Peer& p) {
  const size_t base = size_t(p.rank) * shard_;
  if (!(p.header & kPositionsForm)) {
    for (size_t i = 0; i < shard_; ++i) setBit(mask_, base + i, getBit(p.body.data(), i));
    return;
  }
  std::vector<uint32_t> positions(p.body.size() / 4);
  std::memcpy(positions.data(), p.body.data(), p.body.size());
  for (uint32_t i : positions) {
    if (i >= shard_) {
      throwError(qcclInvalidUsage, "mask exchange: rank %d sent position %u of a %zu-element shard",
                 p.rank, i, shard_);
    }
  }
  for (size_t i = 0; i < shard_; ++i) setBit(mask_, base + i, false);
  for (uint32_t i : positions) setBit(mask_, base + i, true);
}

bool MaskExchange::test() {
  bool all = true;
  for (Peer& p : peers_) {
    if (p.done) continue;
    if (!p.headerDone && testMessage(comm_, p.headerId)) {
      p.headerDone = true;
      progress(p);
    }
    if (!p.done && p.bodyPosted && testMessage(comm_, p.bodyId)) {
      p.done = true;
      place(p);
    }
    all = all && p.done;
  }
  if (!all) return false;
  for (auto it = sends_.begin(); it != sends_.end();) {
    it = testMessage(comm_, *it) ? sends_.erase(it) : it + 1;
  }
  return sends_.empty();
}

void MaskExchange::wait() {
  std::vector<std::pair<qcclComm*, uint64_t>> headers;
  for (Peer& p : peers_) {
    if (!p.headerDone) headers.emplace_back(&comm_, p.headerId);
  }
  waitMessages(headers);
  std::vector<std::pair<qcclComm*, uint64_t>> bodies;
  for (Peer& p : peers_) {
    if (p.done) continue;
    p.headerDone = true;
    progress(p);
    if (!p.done) bodies.emplace_back(&comm_, p.bodyId);
  }
  waitMessages(bodies);
  for (Peer& p : peers_) {
    if (!p.done) {
      p.done = true;
      place(p);
    }
  }
  std::vector<std::pair<qcclComm*, uint64_t>> sends;
  for (uint64_t id : sends_) sends.emplace_back(&comm_, id);
  sends_.clear();
  waitMessages(sends);
}

}  // namespace qccl
