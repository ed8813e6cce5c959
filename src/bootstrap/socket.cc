#include "src/bootstrap/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "src/common/error.h"
#include "src/common/params.h"

namespace qccl::bootstrap {

uint16_t SocketAddress::port() const {
  if (storage.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

void SocketAddress::setPort(uint16_t port) {
  if (storage.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  }
}

std::string SocketAddress::toString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, host,
              sizeof host);
    return std::string("[") + host + "]:" + std::to_string(port());
  }
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port());
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {

// Waits until fd is ready for events or the deadline passes (then throws qcclTimeout).
void waitReady(int fd, short events, const Deadline& deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = int(deadline.remaining().count());
    const int n = poll(&p, 1, ms > 0 ? ms : 0);
    if (n > 0) return;
    if (n == 0) throwError(qcclTimeout, "bootstrap: timed out waiting to %s", what);
    if (errno != EINTR)
      throwError(qcclSystemError, "bootstrap: poll: %s", errnoText(errno).c_str());
  }
}

void setNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

void Socket::sendAll(const void* data, size_t size, const Deadline& deadline) const {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd_, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= size_t(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      waitReady(fd_, POLLOUT, deadline, "send");
    } else {
      throwError(qcclRemoteError, "bootstrap: send failed, peer gone: %s",
                 errnoText(errno).c_str());
    }
  }
}

void Socket::recvAll(void* data, size_t size, const Deadline& deadline) const {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd_, p, size, 0);
    if (n > 0) {
      p += n;
      size -= size_t(n);
    } else if (n == 0) {
      throwError(qcclRemoteError, "bootstrap: connection closed by the peer");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      waitReady(fd_, POLLIN, deadline, "receive");
    } else {
      throwError(qcclRemoteError, "bootstrap: receive failed: %s", errnoText(errno).c_str());
    }
  }
}

size_t Socket::recvSome(void* data, size_t size) const {
  for (;;) {
    const ssize_t n = ::recv(fd_, data, size, 0);
    if (n > 0) return size_t(n);
    if (n == 0) throwError(qcclRemoteError, "bootstrap: connection closed by the peer");
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    if (errno != EINTR) {
      throwError(qcclRemoteError, "bootstrap: receive failed: %s", errnoText(errno).c_str());
    }
  }
}

Socket listenOn(const SocketAddress& address) {
  Socket s(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) throwError(qcclSystemError, "bootstrap: socket: %s", errnoText(errno).c_str());
  const int one = 1;
  setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) != 0) {
    throwError(qcclSystemError, "bootstrap: bind %s: %s", address.toString().c_str(),
               errnoText(errno).c_str());
  }
  if (::listen(s.fd(), 512) != 0) {
    throwError(qcclSystemError, "bootstrap: listen: %s", errnoText(errno).c_str());
  }
  setNonBlocking(s.fd());
  return s;
}

SocketAddress boundAddress(const Socket& socket) {
  SocketAddress a;
  a.length = sizeof a.storage;
  getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&a.storage), &a.length);
  return a;
}

Socket acceptNow(const Socket& listener) {
  for (;;) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return Socket(fd);
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Socket();
    if (errno != EINTR && errno != ECONNABORTED) {
      throwError(qcclSystemError, "bootstrap: accept: %s", errnoText(errno).c_str());
    }
  }
}

Socket acceptWithin(const Socket& listener, const Deadline& deadline) {
  for (;;) {
    Socket s = acceptNow(listener);
    if (s.valid()) return s;
    waitReady(listener.fd(), POLLIN, deadline, "accept a rank");
  }
}

SocketAddress peerAddress(const Socket& socket) {
  SocketAddress a;
  a.length = sizeof a.storage;
  if (getpeername(socket.fd(), reinterpret_cast<sockaddr*>(&a.storage), &a.length) != 0) {
    a.length = 0;
  }
  return a;
}

Socket connectWithin(const SocketAddress& address, const Deadline& deadline) {
  for (;;) {
    Socket s(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s.valid()) throwError(qcclSystemError, "bootstrap: socket: %s", errnoText(errno).c_str());
    int err = 0;
    if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) !=
        0) {
      err = errno;
      if (err == EINPROGRESS) {
        waitReady(s.fd(), POLLOUT, deadline, ("connect to " + address.toString()).c_str());
        socklen_t len = sizeof err;
        getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
    if (err == 0) {
      const int one = 1;
      setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return s;
    }
    if (err != ECONNREFUSED && err != ETIMEDOUT && err != EHOSTUNREACH && err != ENETUNREACH) {
      throwError(qcclSystemError, "bootstrap: connect %s: %s", address.toString().c_str(),
                 errnoText(err).c_str());
    }
    if (deadline.passed()) {
      throwError(qcclTimeout, "bootstrap: could not connect to %s: %s", address.toString().c_str(),
                 errnoText(err).c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

namespace {

// NCCL_SOCKET_IFNAME's matching: "eth,ib" prefixes, "^docker" excludes, "=eth0" exact.
bool interfaceSelected(const std::string& name, const std::string& spec) {
  if (spec.empty()) return name != "lo" && name.rfind("docker", 0) != 0;
  const bool exclude = spec[0] == '^';
  std::string list = spec.substr(exclude ? 1 : 0);
  const bool exact = !list.empty() && list[0] == '=';
  if (exact) list = list.substr(1);
  bool matched = false;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = list.find(',', start);
    const std::string item = list.substr(start, end == std::string::npos ? end : end - start);
    if (!item.empty() && (exact ? name == item : name.rfind(item, 0) == 0)) matched = true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return exclude ? !matched : matched;
}

}  // namespace

SocketAddress bootstrapInterfaceAddress() {
  const std::string spec = paramString(params::kSocketIfname);
  ifaddrs* list = nullptr;
  SocketAddress chosen;
  if (getifaddrs(&list) == 0) {
    for (int pass = 0; pass < 2 && chosen.length == 0; ++pass) {  // IPv4 first, then IPv6
      for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP)) continue;
        const int family = pass == 0 ? AF_INET : AF_INET6;
        if (i->ifa_addr->sa_family != family || !interfaceSelected(i->ifa_name, spec)) continue;
        if (family == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr)) {
          continue;
        }
        chosen.length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
        std::memcpy(&chosen.storage, i->ifa_addr, chosen.length);
        break;
      }
    }
    freeifaddrs(list);
  }
  if (chosen.length == 0) {
    if (!spec.empty()) {
      throwError(qcclInvalidArgument, "QCCL_SOCKET_IFNAME=%s matches no interface that is up",
                 spec.c_str());
    }
    chosen = resolveHost("127.0.0.1", 0);
  }
  chosen.setPort(0);
  return chosen;
}

SocketAddress resolveHost(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0 || result == nullptr) {
    throwError(qcclInvalidArgument, "cannot resolve host '%s': %s", host.c_str(), gai_strerror(rc));
  }
  SocketAddress a;
  a.length = socklen_t(result->ai_addrlen);
  std::memcpy(&a.storage, result->ai_addr, result->ai_addrlen);
  freeaddrinfo(result);
  a.setPort(port);
  return a;
}

}  // namespace qccl::bootstrap
