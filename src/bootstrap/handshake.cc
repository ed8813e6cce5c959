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

}  // namespace qccl::bootstrap
