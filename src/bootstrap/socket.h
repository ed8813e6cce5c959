// TCP sockets for the bootstrap: every blocking step waits at most until a deadline.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/common/deadline.h"

namespace qccl::bootstrap {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  uint16_t port() const;
  void setPort(uint16_t port);
  std::string toString() const;
};

// An owned file descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

  // Throw Error: qcclTimeout past the deadline, qcclRemoteError when the peer went away.
  void sendAll(const void* data, size_t size, const Deadline& deadline) const;
  void recvAll(void* data, size_t size, const Deadline& deadline) const;
  // What has arrived, up to size bytes, without waiting: 0 when nothing has. Throws
  // qcclRemoteError when the peer closed the connection or it failed.
  size_t recvSome(void* data, size_t size) const;

 private:
  int fd_ = -1;
};

Socket listenOn(const SocketAddress& address);  // port 0: any free port
SocketAddress boundAddress(const Socket& socket);
Socket acceptWithin(const Socket& listener, const Deadline& deadline);
// The next queued connection, or an invalid Socket when none is. Throws qcclSystemError when
// accept fails for another reason (out of descriptors: EMFILE).
Socket acceptNow(const Socket& listener);
SocketAddress peerAddress(const Socket& socket);
// Retries refused connections (the listener may not be up yet) until the deadline.
Socket connectWithin(const SocketAddress& address, const Deadline& deadline);

// The address peers reach this host at: the first interface QCCL_SOCKET_IFNAME selects (NCCL's
// syntax: prefixes, ^ to exclude, = for exact names), else the first non-loopback IPv4
// interface, else 127.0.0.1. Port 0.
SocketAddress bootstrapInterfaceAddress();
// host is a name or a numeric address.
SocketAddress resolveHost(const std::string& host, uint16_t port);

}  // namespace qccl::bootstrap
