#pragma once

// A TCP relay for black-box tests: listens on a loopback address, forwards
// every connection to a target (e.g. the private Postfix) and counts the
// connections -- opened in all, and the most open at once -- independently
// of what the service under test reports about itself. One thread per
// connection (tests open a few dozen).
//
// A connection counts as open from its accept until the client closes it.
// The service closes a session's socket before it opens the next one, but
// the relay's thread may see that close after the next accept: so at each
// accept the relay first looks (MSG_PEEK) for clients whose close has
// already arrived, and stops counting them.

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mailassay::testing {

class tcp_relay {
public:
  /// Listens on `ip`:`port` (0: a free port), forwards to `to_ip`:`to_port`.
  tcp_relay(const std::string& ip, std::uint16_t port, std::string to_ip,
            std::uint16_t to_port)
      : to_ip_(std::move(to_ip)), to_port_(to_port) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_, 128) != 0) {
      ::close(listen_);
      throw std::runtime_error("tcp_relay: cannot listen on " + ip);
    }
    acceptor_ = std::thread{[this] { accept_loop(); }};
  }

  ~tcp_relay() {
    stop_ = true;
    ::shutdown(listen_, SHUT_RDWR);
    acceptor_.join();
    ::close(listen_);
    std::lock_guard guard{mutex_};
    for (auto& c : conns_) {
      ::shutdown(c->client, SHUT_RDWR);
      if (c->thread.joinable())
        c->thread.join();
    }
  }

  tcp_relay(const tcp_relay&) = delete;
  tcp_relay& operator=(const tcp_relay&) = delete;

  /// Returns the connections accepted so far.
  std::size_t connections() const { return accepted_; }

  /// Returns the most connections open at once.
  std::size_t peak() const { return peak_; }

  /// Returns the connections open now.
  std::size_t open() const { return open_; }

private:
  struct conn {
    int client = -1;
    std::atomic<bool> closed{false};
    std::thread thread;
  };

  void closed(conn& c) {
    if (!c.closed.exchange(true))
      --open_;
  }

  void accept_loop() {
    for (;;) {
      int fd = ::accept(listen_, nullptr, nullptr);
      if (fd < 0) {
        if (stop_)
          return;
        continue;
      }
      std::lock_guard guard{mutex_};
      // Clients whose close already arrived are no longer open.
      for (auto& c : conns_) {
        char b;
        if (!c->closed &&
            ::recv(c->client, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
          closed(*c);
      }
      ++accepted_;
      auto now = ++open_;
      std::size_t seen = peak_;
      while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
      }
      auto c = std::make_unique<conn>();
      c->client = fd;
      auto* raw = c.get();
      c->thread = std::thread{[this, raw] { pump(*raw); }};
      conns_.push_back(std::move(c));
    }
  }

  void pump(conn& c) {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    int server = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(to_port_);
    ::inet_pton(AF_INET, to_ip_.c_str(), &a.sin_addr);
    if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      pollfd fds[2] = {{c.client, POLLIN, 0}, {server, POLLIN, 0}};
      char buf[16384];
      bool done = false;
      while (!done && ::poll(fds, 2, 200) >= 0) {
        if (stop_)
          break;
        for (int i = 0; i < 2 && !done; ++i) {
          if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
          auto n = ::recv(fds[i].fd, buf, sizeof buf, 0);
          if (n <= 0 || ::send(fds[1 - i].fd, buf, static_cast<std::size_t>(n),
                               MSG_NOSIGNAL) != n)
            done = true;
        }
      }
    }
    closed(c);
    ::close(server);
    ::shutdown(c.client, SHUT_RDWR);
    ::close(c.client);
  }

  std::string to_ip_;
  std::uint16_t to_port_;
  int listen_ = -1;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::list<std::unique_ptr<conn>> conns_;
  std::atomic<std::size_t> accepted_{0}, open_{0}, peak_{0};
};

} // namespace mailassay::testing
