#pragma once

// Loopback helpers for the SMTP client and prober tests: the process's
// thread count, a listener that never accepts (a tarpit that costs no
// thread: the kernel completes the handshakes into its backlog), a port
// with nothing behind it, and a tiny SOCKS5 server (RFC 1928, no
// authentication, CONNECT to 127.0.0.0/8 only) that relays to the peers.

#include <arpa/inet.h>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <list>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mailassay::tests::smtp {

/// Returns the number of threads of this process (/proc/self/status).
inline int thread_count() {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Threads:", 0) == 0)
      return std::stoi(line.substr(8));
  return -1;
}

/// Binds a TCP socket on `address`:`port` (0: any free port); returns it.
inline int bind_socket(const std::string& address, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1 ||
      address.rfind("127.", 0) != 0)
    throw std::runtime_error("loopback addresses only: " + address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind " + address);
  }
  return fd;
}

/// Returns the port a socket is bound to.
inline std::uint16_t port_of(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

/// Returns a port on `address` with nothing listening (connections are
/// refused).
inline std::uint16_t closed_port(const std::string& address) {
  int fd = bind_socket(address, 0);
  auto port = port_of(fd);
  ::close(fd);
  return port;
}

/// A listening socket that never accepts: connections complete and then
/// hear nothing, without a thread per connection.
class silent_listener {
public:
  /// Listens on `address`:`port` (0: a free port).
  explicit silent_listener(const std::string& address, std::uint16_t port = 0)
      : fd_(bind_socket(address, port)) {
    if (::listen(fd_, 4096) != 0)
      throw std::runtime_error("listen failed");
  }
  ~silent_listener() { ::close(fd_); }
  silent_listener(const silent_listener&) = delete;
  silent_listener& operator=(const silent_listener&) = delete;

  /// Returns the bound port.
  std::uint16_t port() const { return port_of(fd_); }

private:
  int fd_;
};

/// A SOCKS5 server on 127.0.0.1 for tests: no authentication, CONNECT to
/// IPv4 loopback targets only, one thread per connection, relays bytes.
class socks5_server {
public:
  /// Starts listening on a free port; `refuse` answers every CONNECT with
  /// reply 5 (connection refused).
  explicit socks5_server(bool refuse = false)
      : fd_(bind_socket("127.0.0.1", 0)), refuse_(refuse) {
    ::listen(fd_, 64);
    acceptor_ = std::thread{[this] { accept_loop(); }};
  }

  ~socks5_server() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    std::lock_guard g{mutex_};
    for (auto& t : workers_)
      t.join();
    ::close(fd_);
  }

  /// Returns "127.0.0.1:port".
  std::string endpoint() const {
    return "127.0.0.1:" + std::to_string(port_of(fd_));
  }

  /// Returns the number of CONNECT requests.
  int connects() const { return connects_; }

  /// Returns the last CONNECT target as "a.b.c.d:port".
  std::string last_target() const {
    std::lock_guard g{mutex_};
    return last_target_;
  }

private:
  static bool read_all(int fd, unsigned char* buf, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0)
        return false;
      auto r = ::recv(fd, buf + got, n - got, 0);
      if (r <= 0)
        return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }

  void serve(int fd) {
    unsigned char b[512];
    if (!read_all(fd, b, 3) || b[0] != 5) {
      ::close(fd);
      return;
    }
    unsigned char method[2] = {5, 0};
    ::send(fd, method, 2, MSG_NOSIGNAL);
    if (!read_all(fd, b, 10) || b[0] != 5 || b[1] != 1 || b[3] != 1) {
      ::close(fd);
      return;
    }
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, b + 4, ip, sizeof ip);
    auto port = static_cast<std::uint16_t>(b[8] << 8 | b[9]);
    {
      std::lock_guard g{mutex_};
      last_target_ = std::string{ip} + ":" + std::to_string(port);
    }
    ++connects_;
    unsigned char reply[10] = {5, 0, 0, 1, 127, 0, 0, 1, 0, 0};
    int up = -1;
    if (!refuse_ && std::string{ip}.rfind("127.", 0) == 0) {
      up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_port = htons(port);
      std::memcpy(&sa.sin_addr, b + 4, 4);
      if (::connect(up, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(up);
        up = -1;
      }
    }
    if (up < 0) {
      reply[1] = 5;
      ::send(fd, reply, sizeof reply, MSG_NOSIGNAL);
      ::close(fd);
      return;
    }
    ::send(fd, reply, sizeof reply, MSG_NOSIGNAL);
    pollfd p[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
    while (!stopping_) {
      if (::poll(p, 2, 200) < 0)
        break;
      bool done = false;
      for (int i = 0; i < 2 && !done; ++i) {
        if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
          continue;
        auto n = ::recv(p[i].fd, b, sizeof b, 0);
        if (n <= 0 || ::send(p[1 - i].fd, b, static_cast<std::size_t>(n),
                             MSG_NOSIGNAL) != n)
          done = true;
      }
      if (done)
        break;
    }
    ::close(up);
    ::close(fd);
  }

  void accept_loop() {
    while (!stopping_) {
      int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0)
        continue;
      std::lock_guard g{mutex_};
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  int fd_;
  bool refuse_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connects_{0};
  mutable std::mutex mutex_;
  std::string last_target_;
  std::thread acceptor_;
  std::list<std::thread> workers_;
};

} // namespace mailassay::tests::smtp
