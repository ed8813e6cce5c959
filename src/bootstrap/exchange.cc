// A rank's side of the bootstrap exchange (the protocol: handshake.h; the root: root.cc).
#include "src/bootstrap/exchange.h"

#include <cstring>

#include "src/bootstrap/handshake.h"
#include "src/common/error.h"
#include "src/common/random_bytes.h"

namespace qccl::bootstrap {

std::vector<std::string> exchangeThroughRoot(const RootInfo& root, int rank, int nranks,
                                             const std::string& payload, const Deadline& deadline) {
  if (payload.size() > kMaxPayloadBytes) {
    throwError(qcclInternalError, "bootstrap: payload of %zu bytes", payload.size());
  }
  Socket s = connectWithin(root.address, deadline);
  char hello[4];
  Nonce rootNonce, ourNonce;
  s.recvAll(hello, 4, deadline);
  if (std::memcmp(hello, kHello, 4) != 0) {
    throwError(qcclRemoteError, "bootstrap: %s is not a qccl bootstrap root",
               root.address.toString().c_str());
  }
  s.recvAll(rootNonce.data(), rootNonce.size(), deadline);
  randomBytes(ourNonce.data(), ourNonce.size());
  const uint64_t proof = handshakeMac(root.secret, "rank", rootNonce);
  s.sendAll(&proof, 8, deadline);
  s.sendAll(ourNonce.data(), ourNonce.size(), deadline);
  uint64_t answer = 0;
  try {
    s.recvAll(&answer, 8, deadline);
  } catch (const Error& e) {
    if (e.code() != qcclRemoteError) throw;
    throwError(qcclRemoteError,
               "bootstrap: the root at %s refused this rank (its unique id's secret differs, or "
               "the communicator has formed without it)",
               root.address.toString().c_str());
  }
  if (answer != handshakeMac(root.secret, "root", ourNonce)) {
    throwError(qcclRemoteError, "bootstrap: the root at %s could not prove the secret",
               root.address.toString().c_str());
  }
  sendU32(s, uint32_t(rank), deadline);
  sendU32(s, uint32_t(nranks), deadline);
  sendString(s, payload, deadline);
  const uint32_t status = recvU32(s, deadline);
  if (status != 0) {
    const std::string text = recvString(s, kMaxStatusTextBytes, deadline);
    throwError(static_cast<qcclResult_t>(status), "%s", text.c_str());
  }
  std::vector<std::string> all(static_cast<size_t>(nranks));
  for (std::string& p : all) p = recvString(s, kMaxPayloadBytes, deadline);
  return all;
}

}  // namespace qccl::bootstrap
