// The bootstrap's wire protocol, shared by the root and the ranks (docs/API.md, "Bootstrap"):
//   root -> rank: "QBS1", the root's 16-byte nonce
//   rank -> root: MAC("rank", root nonce), the rank's 16-byte nonce
//   root -> rank: MAC("root", rank nonce)             (nothing: the rank did not prove the secret)
//   rank -> root: rank, size, payload length (u32 each), payload
//   root -> rank: status (u32); 0: every payload (length, bytes) in rank order; else a message
// MAC is SipHash-2-4 keyed with the unique id's secret over the role name and the nonce. Integers
// are in the hosts' byte order: the ranks of one communicator share an architecture.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/bootstrap/unique_id.h"

namespace qccl::bootstrap {

constexpr char kHello[4] = {'Q', 'B', 'S', '1'};
constexpr size_t kMaxPayloadBytes = 64 * 1024;
constexpr size_t kMaxStatusTextBytes = 4096;

using Nonce = std::array<uint8_t, 16>;

uint64_t handshakeMac(const Secret& secret, const char* role, const Nonce& nonce);

// The framing: u32 in host order; a string is its u32 length and its bytes.
void sendU32(const Socket& s, uint32_t v, const Deadline& d);
uint32_t recvU32(const Socket& s, const Deadline& d);
void sendString(const Socket& s, const std::string& v, const Deadline& d);
// Throws qcclInvalidUsage for a length over limit, before reading any of it.
std::string recvString(const Socket& s, size_t limit, const Deadline& d);

// The root's reading of one connection: its proof, then its join message, from whatever bytes
// arrive however split. Apart from the socket so that any byte sequence can be fed to it
// (tests/fuzz/bootstrap_fuzz.cc).
class HandshakeReader {
 public:
  enum class Event { None, Proof, Join, Oversized };

  // Bytes the current message still lacks (at least 1).
  size_t wanted() const;
  // Takes n <= wanted() bytes; tells when they complete a message, or announce a payload over
  // kMaxPayloadBytes (then nothing more is to be read).
  Event take(const char* data, size_t n);
  // After Event::Proof: the message's parts; the caller checks them and, if they hold, calls
  // proofAccepted to read the join message.
  uint64_t proof() const;
  Nonce peerNonce() const;
  void proofAccepted();
  bool proved() const { return proved_; }
  // After Event::Join (rank, size, payload); after Event::Oversized, the announced length.
  uint32_t rank() const { return u32At(0); }
  uint32_t nranks() const { return u32At(4); }
  uint32_t payloadBytes() const { return u32At(8); }
  std::string payload() const { return received_.substr(kJoinHeaderBytes); }
  size_t received() const { return received_.size(); }

 private:
  static constexpr size_t kProofBytes = 8 + sizeof(Nonce);
  static constexpr size_t kJoinHeaderBytes = 12;  // rank, size, payload length
  uint32_t u32At(size_t offset) const;

  bool proved_ = false;
  std::string received_;  // the current message so far
};

}  // namespace qccl::bootstrap
