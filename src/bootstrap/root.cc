// The bootstrap root: one thread, one poll loop over the listener and every connection still in
// its handshake, so that no connection can hold up another. A client that sends garbage, the
// wrong proof, too much, too little or nothing at all is dropped with a logged reason while the
// ranks that hold the secret go on joining; a flood of connections evicts the oldest unfinished
// handshake rather than refusing newcomers (a real rank finishes its handshake within one round
// trip, a connection that idles in it is the one to drop).
#include <poll.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include "src/bootstrap/exchange.h"
#include "src/bootstrap/handshake.h"
#include "src/common/error.h"
#include "src/common/log.h"
#include "src/common/random_bytes.h"

namespace qccl::bootstrap {

namespace {

using Clock = std::chrono::steady_clock;

// A connection gets this long to prove the secret and send its join message.
constexpr std::chrono::milliseconds kHandshakeTimeout(10000);
// Connections in their handshake at once; beyond it the oldest is dropped.
constexpr size_t kMaxHandshakes = 256;

// A connection that has not joined yet.
struct Handshake {
  Socket socket;
  std::string peer;
  Nonce rootNonce{};
  HandshakeReader reader;
  Clock::time_point deadline;
  bool over = false;  // joined, refused or dropped: leaves the poll set
};

struct Member {
  Socket socket;
  uint32_t rank;
  uint32_t nranks;
  std::string payload;
};

// Tells one connection why it is turned away; it may be gone already.
void refuse(const Socket& s, qcclResult_t status, const std::string& text) {
  const Deadline d = Deadline::after(std::chrono::milliseconds(1000));
  try {
    sendU32(s, uint32_t(status), d);
    sendString(s, text.substr(0, kMaxStatusTextBytes), d);
  } catch (const Error&) {
  }
}

class Root {
 public:
  Root(Socket listener, const Secret& secret, std::chrono::milliseconds idleTimeout)
      : listener_(std::move(listener)), secret_(secret), idleTimeout_(idleTimeout) {}

  void run() {
    Clock::time_point idleDeadline = Clock::now() + idleTimeout_;
    while (!finished_) {
      std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
      Clock::time_point wake = idleDeadline;
      for (const Handshake& h : handshakes_) {
        fds.push_back({h.socket.fd(), POLLIN, 0});
        wake = std::min(wake, h.deadline);
      }
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now());
      if (poll(fds.data(), fds.size(), int(std::max<int64_t>(0, wait.count()))) < 0 &&
          errno != EINTR) {
        reply(qcclSystemError, "bootstrap: the root's poll failed");
        return;
      }
      const size_t membersBefore = members_.size();
      advanceHandshakes(fds);
      if (members_.size() != membersBefore) idleDeadline = Clock::now() + idleTimeout_;
      if (finished_) return;
      if (fds[0].revents) acceptAll();
      if (Clock::now() >= idleDeadline) {
        QCCL_INFO(kLogBootstrap, "bootstrap root: giving up after %u of %u ranks",
                  unsigned(members_.size()), expected_);
        reply(qcclTimeout, "bootstrap: not all ranks joined in time");
        return;
      }
    }
  }

 private:
  // fds[1 + i] is handshakes_[i].
  void advanceHandshakes(const std::vector<pollfd>& fds) {
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < handshakes_.size() && !finished_; ++i) {
      Handshake& h = handshakes_[i];
      if (fds[1 + i].revents) {
        h.over = !advance(h);
      } else if (now >= h.deadline) {
        QCCL_WARN("bootstrap root: dropped %s: no %s within %lld ms", h.peer.c_str(),
                  h.reader.proved() ? "join message" : "proof of the secret",
                  static_cast<long long>(kHandshakeTimeout.count()));
        h.over = true;
      }
    }
    handshakes_.erase(std::remove_if(handshakes_.begin(), handshakes_.end(),
                                     [](const Handshake& h) { return h.over; }),
                      handshakes_.end());
  }

  void acceptAll() {
    for (;;) {
      Socket s;
      try {
        s = acceptNow(listener_);
      } catch (const Error& e) {  // out of descriptors: make room for the next one
        QCCL_WARN("bootstrap root: %s", e.what());
        if (!evictOldest("out of file descriptors")) return;
        continue;
      }
      if (!s.valid()) return;
      if (handshakes_.size() >= kMaxHandshakes) evictOldest("too many connections in handshake");
      Handshake h;
      h.peer = peerAddress(s).toString();
      h.socket = std::move(s);
      h.deadline = Clock::now() + kHandshakeTimeout;
      randomBytes(h.rootNonce.data(), h.rootNonce.size());
      try {
        const Deadline d = Deadline::after(std::chrono::milliseconds(1000));
        h.socket.sendAll(kHello, sizeof kHello, d);
        h.socket.sendAll(h.rootNonce.data(), h.rootNonce.size(), d);
      } catch (const Error& e) {
        QCCL_WARN("bootstrap root: dropped %s: %s", h.peer.c_str(), e.what());
        continue;
      }
      handshakes_.push_back(std::move(h));
    }
  }

  bool evictOldest(const char* why) {
    if (handshakes_.empty()) return false;
    QCCL_WARN("bootstrap root: dropped %s: %s", handshakes_.front().peer.c_str(), why);
    handshakes_.pop_front();
    return true;
  }

  // Reads what arrived on h and acts on each complete message. False when h is done with: it
  // joined, was refused or dropped.
  bool advance(Handshake& h) {
    try {
      for (;;) {
        char buffer[4096];
        const size_t n = h.socket.recvSome(buffer, std::min(sizeof buffer, h.reader.wanted()));
        if (n == 0) return true;  // the rest has not arrived yet
        switch (h.reader.take(buffer, n)) {
          case HandshakeReader::Event::None: break;
          case HandshakeReader::Event::Proof:
            if (!checkProof(h)) return false;
            break;
          case HandshakeReader::Event::Join: join(h); return false;
          case HandshakeReader::Event::Oversized:
            QCCL_WARN("bootstrap root: refused %s: a payload of %u bytes (at most %zu)",
                      h.peer.c_str(), h.reader.payloadBytes(), kMaxPayloadBytes);
            refuse(h.socket, qcclInvalidUsage, "bootstrap: the payload is too big");
            return false;
        }
      }
    } catch (const Error& e) {
      QCCL_WARN("bootstrap root: dropped %s after %zu bytes of its %s: %s", h.peer.c_str(),
                h.reader.received(), h.reader.proved() ? "join message" : "proof", e.what());
      return false;
    }
  }

  bool checkProof(Handshake& h) {
    if (h.reader.proof() != handshakeMac(secret_, "rank", h.rootNonce)) {
      QCCL_WARN("bootstrap root: refused %s: it did not prove the unique id's secret",
                h.peer.c_str());
      return false;
    }
    const uint64_t answer = handshakeMac(secret_, "root", h.reader.peerNonce());
    h.socket.sendAll(&answer, 8, Deadline::after(std::chrono::milliseconds(1000)));
    h.reader.proofAccepted();
    return true;
  }

  void join(Handshake& h) {
    Member m{std::move(h.socket), h.reader.rank(), h.reader.nranks(), h.reader.payload()};
    if (m.rank >= m.nranks) {
      refuseMember(m, h.peer,
                   "rank " + std::to_string(m.rank) + " is out of range for size " +
                       std::to_string(m.nranks));
      return;
    }
    for (const Member& other : members_) {
      if (other.rank == m.rank) {
        refuseMember(m, h.peer, "rank " + std::to_string(m.rank) + " has joined already");
        return;
      }
    }
    if (expected_ == 0) expected_ = m.nranks;
    members_.push_back(std::move(m));
    if (members_.back().nranks != expected_) {
      // Ranks launched with different sizes: no communicator can be right, so none is made.
      reply(qcclInvalidUsage, "bootstrap: ranks disagree on the communicator size (" +
                                  std::to_string(members_.back().nranks) + " vs " +
                                  std::to_string(expected_) + ")");
      return;
    }
    if (members_.size() == expected_) {
      std::sort(members_.begin(), members_.end(),
                [](const Member& a, const Member& b) { return a.rank < b.rank; });
      reply(qcclSuccess, "");
      QCCL_INFO(kLogBootstrap, "bootstrap root: %u ranks exchanged", expected_);
    }
  }

  void refuseMember(const Member& m, const std::string& peer, const std::string& problem) {
    QCCL_WARN("bootstrap root: refused %s: %s", peer.c_str(), problem.c_str());
    refuse(m.socket, qcclInvalidUsage, "bootstrap: " + problem);
  }

  // Answers every member and ends the exchange.
  void reply(qcclResult_t status, const std::string& text) {
    finished_ = true;
    const Deadline d = Deadline::after(kHandshakeTimeout);
    for (Member& m : members_) {
      try {
        sendU32(m.socket, uint32_t(status), d);
        if (status != qcclSuccess) {
          sendString(m.socket, text, d);
          continue;
        }
        for (const Member& other : members_) sendString(m.socket, other.payload, d);
      } catch (const Error& e) {
        QCCL_WARN("bootstrap root: could not answer rank %u: %s", m.rank, e.what());
      }
    }
  }

  Socket listener_;
  Secret secret_;
  std::chrono::milliseconds idleTimeout_;
  std::deque<Handshake> handshakes_;  // oldest first
  std::vector<Member> members_;
  uint32_t expected_ = 0;
  bool finished_ = false;
};

}  // namespace

RootInfo startRoot(const SocketAddress& address, const Secret& secret,
                   std::chrono::milliseconds idleTimeout) {
  Socket listener = listenOn(address);
  RootInfo info;
  info.address = boundAddress(listener);
  info.secret = secret;
  std::thread([root = std::make_shared<Root>(std::move(listener), secret, idleTimeout)] {
    root->run();
  }).detach();
  QCCL_INFO(kLogBootstrap, "bootstrap root listening on %s", info.address.toString().c_str());
  return info;
}

}  // namespace qccl::bootstrap
