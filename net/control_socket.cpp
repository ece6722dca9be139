#include "net/control_socket.hpp"

#include "net/blocking_socket.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace mailassay::net {

namespace {

using core::errc;
using core::make_error;

/// Longest command line read; a reload is "reload".
constexpr std::size_t max_command = 1024;

core::expected<sockaddr_un> address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof a.sun_path)
    return make_error(errc::bad_request,
                      "control socket path must be 1 to " +
                          std::to_string(sizeof a.sun_path - 1) +
                          " characters: " + path);
  std::memcpy(a.sun_path, path.data(), path.size());
  return a;
}

// Connects a client socket to `path`; -1 with errno set on failure.
int connect_to(const sockaddr_un& a) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

// Only the server's own user and root may give it commands.
bool peer_allowed(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return false;
  return cred.uid == 0 || cred.uid == ::geteuid();
}

// A connection whose command line is still arriving.
struct pending_command {
  int fd = -1;
  std::string line;
  std::chrono::steady_clock::time_point deadline;
};

// Connections read at once; more wait in the listen backlog.
constexpr std::size_t max_open = 32;

// Accepts one connection; nullopt when there was none or its peer may not
// give commands (then told so). The answer may take `send_limit` to leave:
// a client that does not read does not hold the thread longer.
std::optional<pending_command>
accept_command(int listen_fd, std::chrono::steady_clock::time_point deadline,
               std::chrono::milliseconds send_limit) {
  int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0)
    return std::nullopt;
  timeval tv{};
  tv.tv_sec = send_limit.count() / 1000;
  tv.tv_usec = (send_limit.count() % 1000) * 1000;
  ::setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (!peer_allowed(c)) {
    send_all(c, "forbidden\n");
    ::close(c);
    return std::nullopt;
  }
  return pending_command{c, {}, deadline};
}

// Reads what `c` has sent without waiting; true once its command is whole
// (a newline, the peer's end of sending, or the longest command).
bool read_some(pending_command& c) {
  char buf[256];
  for (;;) {
    auto n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return false;
    if (n <= 0)
      return true;
    c.line.append(buf, static_cast<std::size_t>(n));
    if (c.line.find('\n') != std::string::npos || c.line.size() >= max_command)
      return true;
  }
}

// The command of a received line: up to its newline, without a CR.
std::string command_of(std::string line) {
  if (auto nl = line.find('\n'); nl != std::string::npos)
    line.erase(nl);
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  return line;
}

} // namespace

core::expected<std::unique_ptr<control_listener>>
control_listener::start(std::string path, control_handler handler,
                        std::chrono::milliseconds read_deadline) {
  auto a = address_of(path);
  if (!a)
    return std::move(a).error_value();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return make_error(errc::bad_request,
                        path + " exists and is not a socket: not replaced");
    if (int fd = connect_to(*a); fd >= 0) {
      ::close(fd);
      return make_error(errc::conflict, "another process answers on " + path);
    }
    // Refused: left by a process that is gone. Anything else (another
    // user's socket) is not ours to remove.
    if (errno != ECONNREFUSED)
      return make_error(errc::bad_request,
                        "cannot use " + path + ": " + std::strerror(errno));
    ::unlink(path.c_str());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return make_error(errc::internal, std::strerror(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*a), sizeof *a) != 0) {
    auto why = path + ": " + std::strerror(errno);
    ::close(fd);
    return make_error(errc::bad_request, "cannot bind control socket " + why);
  }
  // Nobody can connect before listen(): the mode is set first.
  if (::chmod(path.c_str(), 0600) != 0 || ::listen(fd, 8) != 0 ||
      ::stat(path.c_str(), &st) != 0) {
    auto why = path + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return make_error(errc::internal, "cannot listen on " + why);
  }
  int wake = ::eventfd(0, EFD_CLOEXEC);
  if (wake < 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return make_error(errc::internal, std::strerror(errno));
  }
  std::unique_ptr<control_listener> l{new control_listener(
      std::move(path), fd, wake, std::move(handler), read_deadline)};
  l->inode_ = st.st_ino;
  l->thread_ = std::thread{[raw = l.get()] { raw->run(); }};
  return l;
}

control_listener::control_listener(std::string path, int fd, int wake,
                                   control_handler h,
                                   std::chrono::milliseconds read_deadline)
    : path_(std::move(path)), fd_(fd), wake_(wake), handler_(std::move(h)),
      read_deadline_(read_deadline) {}

control_listener::~control_listener() {
  stop();
}

void control_listener::stop() {
  if (fd_ < 0)
    return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_, &one, sizeof one);
  if (thread_.joinable())
    thread_.join();
  ::close(fd_);
  ::close(wake_);
  fd_ = wake_ = -1;
  // A newer server may have replaced the file meanwhile: only ours goes.
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_ino == inode_)
    ::unlink(path_.c_str());
}

void control_listener::run() {
  using clock = std::chrono::steady_clock;
  std::vector<pending_command> open;
  std::vector<pollfd> p;
  for (;;) {
    // At the cap, new clients wait in the backlog until a deadline frees a
    // place: at most one read deadline.
    p.assign({{fd_, static_cast<short>(open.size() < max_open ? POLLIN : 0), 0},
              {wake_, POLLIN, 0}});
    for (const auto& c : open)
      p.push_back({c.fd, POLLIN, 0});
    auto now = clock::now();
    int wait_ms = -1;
    for (const auto& c : open) {
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(c.deadline - now);
      auto ms = static_cast<int>(std::max<std::int64_t>(0, left.count()));
      wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
    }
    if (::poll(p.data(), p.size(), wait_ms) < 0 && errno != EINTR)
      break;
    if (p[1].revents != 0)
      break;
    now = clock::now();
    std::vector<pending_command> still;
    for (std::size_t i = 0; i < open.size(); ++i) {
      auto& c = open[i];
      bool done = false;
      if (p[i + 2].revents != 0)
        done = read_some(c);
      if (done) {
        send_all(c.fd, handler_(command_of(c.line)));
        ::close(c.fd);
      } else if (c.deadline <= now) {
        ::close(c.fd); // said nothing whole in time
      } else {
        still.push_back(std::move(c));
      }
    }
    open = std::move(still);
    if ((p[0].revents & POLLIN) != 0)
      if (auto c = accept_command(fd_, now + read_deadline_, read_deadline_))
        open.push_back(std::move(*c));
  }
  for (const auto& c : open)
    ::close(c.fd);
}

core::expected<std::string> control_request(const std::string& path,
                                            std::string_view command,
                                            std::chrono::milliseconds timeout) {
  auto a = address_of(path);
  if (!a)
    return std::move(a).error_value();
  int fd = connect_to(*a);
  if (fd < 0) {
    if (errno == EACCES || errno == EPERM)
      return make_error(errc::forbidden,
                        "no permission to open " + path +
                            " (run as the server's user or root)");
    return make_error(errc::unavailable, "nothing answers on " + path + ": " +
                                             std::strerror(errno));
  }
  std::string line{command};
  line += '\n';
  if (!send_all(fd, line)) {
    ::close(fd);
    return make_error(errc::unavailable, "the server closed " + path);
  }
  ::shutdown(fd, SHUT_WR);
  auto answer = read_to_end(fd, timeout);
  ::close(fd);
  if (!answer)
    return make_error(errc::request_timeout,
                      "no answer on " + path + " in time");
  return std::move(*answer);
}

} // namespace mailassay::net
