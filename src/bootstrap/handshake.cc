#include "src/bootstrap/handshake.h"

#include <cstring>

#include "src/common/error.h"
#include "src/common/siphash.h"

namespace qccl::bootstrap {

uint64_t handshakeMac(const Secret& secret, const char* role, const Nonce& nonce) {
  uint8_t message[24] = {0};
  std::strncpy(reinterpret_cast<char*>(message), role, 8);
  std::memcpy(message + 8, nonce.data(), nonce.size());
  return sipHash24(secret.data(), message, sizeof message);
}

void sendU32(const Socket& s, uint32_t v, const Deadline& d) { s.sendAll(&v, 4, d); }

uint32_t recvU32(const Socket& s, const Deadline& d) {
  uint32_t v = 0;
  s.recvAll(&v, 4, d);
  return v;
}

void sendString(const Socket& s, const std::string& v, const Deadline& d) {
  sendU32(s, uint32_t(v.size()), d);
  s.sendAll(v.data(), v.size(), d);
}

std::string recvString(const Socket& s, size_t limit, const Deadline& d) {
  const uint32_t size = recvU32(s, d);
  if (size > limit) throwError(qcclInvalidUsage, "bootstrap: message of %u bytes is too big", size);
  std::string v(size, '\0');
  s.recvAll(v.data(), size, d);
  return v;
}

size_t HandshakeReader::wanted() const {
  if (!proved_) return kProofBytes - received_.size();
  if (received_.size() < kJoinHeaderBytes) return kJoinHeaderBytes - received_.size();
  return kJoinHeaderBytes + payloadBytes() - received_.size();
}

HandshakeReader::Event HandshakeReader::take(const char* data, size_t n) {
  received_.append(data, n);
  if (wanted() > 0) {
    const bool header = proved_ && received_.size() == kJoinHeaderBytes;
    return header && payloadBytes() > kMaxPayloadBytes ? Event::Oversized : Event::None;
  }
  return proved_ ? Event::Join : Event::Proof;
}

uint64_t HandshakeReader::proof() const {
  uint64_t v = 0;
  std::memcpy(&v, received_.data(), 8);
  return v;
}

Nonce HandshakeReader::peerNonce() const {
  Nonce nonce;
  std::memcpy(nonce.data(), received_.data() + 8, nonce.size());
  return nonce;
}

void HandshakeReader::proofAccepted() {
  proved_ = true;
  received_.clear();
}

uint32_t HandshakeReader::u32At(size_t offset) const {
  uint32_t v = 0;
  std::memcpy(&v, received_.data() + offset, 4);
  return v;
}

}  // namespace qccl::bootstrap
