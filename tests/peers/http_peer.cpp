#include "tests/peers/http_peer.hpp"

#include "tests/peers/tls_identity.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mailassay::tests::peers {

namespace {

using clock_type = std::chrono::steady_clock;

std::string lower(std::string s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return s;
}

} // namespace

std::string http_peer_request::header(const std::string& lower_name) const {
  auto i = headers.find(lower_name);
  return i == headers.end() ? std::string{} : i->second;
}

struct http_peer::impl {
  http_peer_options opts;
  int listen_fd = -1;
  std::uint16_t port = 0;
  std::unique_ptr<tls_identity> tls;
  std::atomic<bool> stopping{false};
  std::thread acceptor;

  mutable std::mutex mutex;
  mutable std::condition_variable arrived;
  std::deque<http_peer_reply> script;
  http_peer_reply fallback;
  std::vector<http_peer_request> received;
  std::size_t connections = 0;
  std::list<std::thread> workers;

  ~impl() {
    if (listen_fd >= 0)
      ::close(listen_fd);
  }

  // Waits until `fd` is readable; false on stop, error or `until`.
  bool readable(int fd, SSL* ssl) {
    if (ssl != nullptr && SSL_pending(ssl) > 0)
      return true;
    pollfd p{fd, POLLIN, 0};
    while (!stopping) {
      int n = ::poll(&p, 1, 100);
      if (n < 0 && errno != EINTR)
        return false;
      if (n > 0)
        return true;
    }
    return false;
  }

  bool pause(std::chrono::milliseconds d) {
    auto until = clock_type::now() + d;
    while (!stopping && clock_type::now() < until)
      std::this_thread::sleep_for(std::min<clock_type::duration>(
          until - clock_type::now(), std::chrono::milliseconds{10}));
    return !stopping;
  }

  void serve(int fd) {
    SSL* ssl = nullptr;
    if (tls) {
      ssl = SSL_new(tls->ctx());
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) != 1) {
        SSL_free(ssl);
        ::close(fd);
        return;
      }
    }
    std::string buf;
    auto read_more = [&] {
      if (!readable(fd, ssl))
        return false;
      char chunk[4096];
      long got = ssl != nullptr ? SSL_read(ssl, chunk, sizeof chunk)
                                : ::recv(fd, chunk, sizeof chunk, 0);
      if (got <= 0)
        return false;
      buf.append(chunk, static_cast<std::size_t>(got));
      return true;
    };
    http_peer_request req;
    std::size_t head_end = std::string::npos;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!read_more())
        return close_conn(fd, ssl);
    auto head = buf.substr(0, head_end);
    buf.erase(0, head_end + 4);
    auto line_end = head.find("\r\n");
    auto first = head.substr(0, line_end);
    auto sp1 = first.find(' ');
    auto sp2 = first.find(' ', sp1 + 1);
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    for (auto pos = line_end; pos != std::string::npos && pos < head.size();) {
      auto next = head.find("\r\n", pos + 2);
      auto field =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos
                                                         : next - pos - 2);
      auto colon = field.find(':');
      if (colon != std::string::npos) {
        auto value = field.substr(colon + 1);
        while (!value.empty() && value.front() == ' ')
          value.erase(0, 1);
        req.headers[lower(field.substr(0, colon))] = value;
      }
      pos = next;
    }
    std::size_t length = 0;
    if (auto cl = req.header("content-length"); !cl.empty())
      length = std::stoul(cl);
    while (buf.size() < length)
      if (!read_more())
        return close_conn(fd, ssl);
    req.body = buf.substr(0, length);
    http_peer_reply reply;
    std::size_t index = 0;
    {
      std::lock_guard guard{mutex};
      if (!script.empty()) {
        reply = script.front();
        script.pop_front();
      } else {
        reply = fallback;
      }
      index = received.size();
      received.push_back(req);
    }
    arrived.notify_all();
    if (!pause(reply.delay) || reply.close)
      return close_conn(fd, ssl);
    auto text = "HTTP/1.1 " + std::to_string(reply.status) +
                " Scripted\r\nContent-Type: text/plain\r\nContent-Length: "
                "2\r\nConnection: close\r\n\r\nok";
    const char* p = text.data();
    std::size_t n = text.size();
    while (n > 0) {
      long put = ssl != nullptr ? SSL_write(ssl, p, static_cast<int>(n))
                                : ::send(fd, p, n, MSG_NOSIGNAL);
      if (put <= 0)
        break;
      p += put;
      n -= static_cast<std::size_t>(put);
    }
    {
      std::lock_guard guard{mutex};
      received[index].answered = reply.status;
    }
    close_conn(fd, ssl);
  }

  void close_conn(int fd, SSL* ssl) {
    if (ssl != nullptr) {
      SSL_shutdown(ssl);
      SSL_free(ssl);
    }
    ::close(fd);
  }

  void accept_loop() {
    while (!stopping) {
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0)
        continue;
      int fd = ::accept(listen_fd, nullptr, nullptr);
      if (fd < 0)
        continue;
      std::lock_guard guard{mutex};
      ++connections;
      workers.emplace_back([this, fd] { serve(fd); });
    }
  }
};

http_peer::http_peer(http_peer_options options)
    : impl_(std::make_unique<impl>()) {
  auto& s = *impl_;
  s.opts = std::move(options);
  if (s.opts.tls)
    s.tls = std::make_unique<tls_identity>(s.opts.tls_name,
                                           certificate_kind::verifiable);
  s.listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(s.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, s.opts.address.c_str(), &addr.sin_addr);
  if (::bind(s.listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) !=
          0 ||
      ::listen(s.listen_fd, 64) != 0)
    throw std::runtime_error("http_peer: cannot listen on " + s.opts.address);
  socklen_t len = sizeof addr;
  ::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  s.port = ntohs(addr.sin_port);
  s.acceptor = std::thread([&s] { s.accept_loop(); });
}

http_peer::~http_peer() {
  auto& s = *impl_;
  s.stopping = true;
  if (s.acceptor.joinable())
    s.acceptor.join();
  std::list<std::thread> workers;
  {
    std::lock_guard guard{s.mutex};
    workers.swap(s.workers);
  }
  for (auto& t : workers)
    if (t.joinable())
      t.join();
}

std::uint16_t http_peer::port() const {
  return impl_->port;
}

std::string http_peer::url(const std::string& path) const {
  return std::string{impl_->opts.tls ? "https" : "http"} + "://" +
         impl_->opts.address + ":" + std::to_string(impl_->port) + path;
}

std::string http_peer::ca_file() const {
  return impl_->tls ? impl_->tls->pem_file() : std::string{};
}

void http_peer::script(std::vector<http_peer_reply> replies) {
  std::lock_guard guard{impl_->mutex};
  impl_->script.assign(replies.begin(), replies.end());
}

void http_peer::set_fallback(http_peer_reply reply) {
  std::lock_guard guard{impl_->mutex};
  impl_->fallback = reply;
}

std::vector<http_peer_request> http_peer::requests() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->received;
}

bool http_peer::wait_for(std::size_t n,
                         std::chrono::milliseconds timeout) const {
  std::unique_lock lock{impl_->mutex};
  return impl_->arrived.wait_for(lock, timeout,
                                 [&] { return impl_->received.size() >= n; });
}

std::size_t http_peer::connections() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->connections;
}

} // namespace mailassay::tests::peers
