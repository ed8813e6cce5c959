#include "src/bootstrap/exchange.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "src/common/error.h"
#include "src/common/log.h"
#include "src/common/random_bytes.h"
#include "src/common/siphash.h"

namespace qccl::bootstrap {

namespace {

constexpr char kHello[4] = {'Q', 'B', 'S', '1'};
constexpr std::chrono::milliseconds kHandshakeTimeout(10000);

using Nonce = std::array<uint8_t, 16>;

uint64_t mac(const Secret& secret, const char* role, const Nonce& nonce) {
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

struct Member {
  Socket socket;
  uint32_t rank;
  uint32_t nranks;
  std::string payload;
};

// Root side of the handshake: true when the peer proved the secret.
bool admit(const Socket& s, const Secret& secret, const Deadline& d) {
  Nonce rootNonce, peerNonce;
  randomBytes(rootNonce.data(), rootNonce.size());
  s.sendAll(kHello, 4, d);
  s.sendAll(rootNonce.data(), rootNonce.size(), d);
  uint64_t proof = 0;
  s.recvAll(&proof, 8, d);
  s.recvAll(peerNonce.data(), peerNonce.size(), d);
  if (proof != mac(secret, "rank", rootNonce)) return false;
  const uint64_t answer = mac(secret, "root", peerNonce);
  s.sendAll(&answer, 8, d);
  return true;
}

void reply(std::vector<Member>& members, uint32_t status, const std::string& text) {
  const Deadline d = Deadline::after(kHandshakeTimeout);
  for (Member& m : members) {
    try {
      sendU32(m.socket, status, d);
      if (status != 0) {
        sendString(m.socket, text, d);
        continue;
      }
      for (const Member& other : members) sendString(m.socket, other.payload, d);
    } catch (const Error& e) {
      QCCL_WARN("bootstrap root: could not answer rank %u: %s", m.rank, e.what());
    }
  }
}

void runRoot(Socket listener, Secret secret, std::chrono::milliseconds idleTimeout) {
  std::vector<Member> members;
  uint32_t expected = 0;
  for (;;) {
    Socket s;
    try {
      s = acceptWithin(listener, Deadline::after(idleTimeout));
    } catch (const Error& e) {
      QCCL_INFO(kLogBootstrap, "bootstrap root: giving up after %u of %u ranks: %s",
                unsigned(members.size()), expected, e.what());
      reply(members, qcclTimeout, "bootstrap: not all ranks joined in time");
      return;
    }
    try {
      const Deadline d = Deadline::after(kHandshakeTimeout);
      if (!admit(s, secret, d)) {
        QCCL_WARN("bootstrap root: refused a connection that did not prove the secret");
        continue;
      }
      const uint32_t rank = recvU32(s, d);
      const uint32_t nranks = recvU32(s, d);
      std::string payload = recvString(s, kMaxPayloadBytes, d);
      Member m{std::move(s), rank, nranks, std::move(payload)};
      std::string problem;
      if (expected == 0) expected = m.nranks;
      if (m.nranks != expected) {
        problem = "ranks disagree on the communicator size (" + std::to_string(m.nranks) + " vs " +
                  std::to_string(expected) + ")";
      } else if (m.rank >= m.nranks) {
        problem = "rank " + std::to_string(m.rank) + " is out of range for size " +
                  std::to_string(m.nranks);
      }
      for (const Member& other : members) {
        if (other.rank == m.rank) problem = "two ranks claim rank " + std::to_string(m.rank);
      }
      members.push_back(std::move(m));
      if (!problem.empty()) {
        reply(members, qcclInvalidUsage, "bootstrap: " + problem);
        return;
      }
      if (members.size() == expected) {
        std::sort(members.begin(), members.end(),
                  [](const Member& a, const Member& b) { return a.rank < b.rank; });
        reply(members, 0, "");
        QCCL_INFO(kLogBootstrap, "bootstrap root: %u ranks exchanged", expected);
        return;
      }
    } catch (const Error& e) {
      QCCL_WARN("bootstrap root: dropped a connection: %s", e.what());
    }
  }
}

}  // namespace

RootInfo startRoot(const SocketAddress& address, const Secret& secret,
                   std::chrono::milliseconds idleTimeout) {
  Socket listener = listenOn(address);
  RootInfo info;
  info.address = boundAddress(listener);
  info.secret = secret;
  std::thread(runRoot, std::move(listener), secret, idleTimeout).detach();
  QCCL_INFO(kLogBootstrap, "bootstrap root listening on %s", info.address.toString().c_str());
  return info;
}

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
  const uint64_t proof = mac(root.secret, "rank", rootNonce);
  s.sendAll(&proof, 8, deadline);
  s.sendAll(ourNonce.data(), ourNonce.size(), deadline);
  uint64_t answer = 0;
  try {
    s.recvAll(&answer, 8, deadline);
  } catch (const Error& e) {
    if (e.code() != qcclRemoteError) throw;
    throwError(qcclRemoteError,
               "bootstrap: the root at %s refused this rank (its unique id's secret differs)",
               root.address.toString().c_str());
  }
  if (answer != mac(root.secret, "root", ourNonce)) {
    throwError(qcclRemoteError, "bootstrap: the root at %s could not prove the secret",
               root.address.toString().c_str());
  }
  sendU32(s, uint32_t(rank), deadline);
  sendU32(s, uint32_t(nranks), deadline);
  sendString(s, payload, deadline);
  const uint32_t status = recvU32(s, deadline);
  if (status != 0) {
    const std::string text = recvString(s, 4096, deadline);
    throwError(static_cast<qcclResult_t>(status), "%s", text.c_str());
  }
  std::vector<std::string> all(static_cast<size_t>(nranks));
  for (std::string& p : all) p = recvString(s, kMaxPayloadBytes, deadline);
  return all;
}

}  // namespace qccl::bootstrap
