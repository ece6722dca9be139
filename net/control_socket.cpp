#include "net/control_socket.hpp"

#include "net/blocking_socket.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

} // namespace

core::expected<std::unique_ptr<control_listener>>
control_listener::start(std::string path, control_handler handler) {
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
  std::unique_ptr<control_listener> l{
      new control_listener(std::move(path), fd, wake, std::move(handler))};
  l->inode_ = st.st_ino;
  l->thread_ = std::thread{[raw = l.get()] { raw->run(); }};
  return l;
}

control_listener::control_listener(std::string path, int fd, int wake,
                                   control_handler h)
    : path_(std::move(path)), fd_(fd), wake_(wake), handler_(std::move(h)) {}

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
  for (;;) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {wake_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    if (p[1].revents != 0)
      return;
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    if (!peer_allowed(c)) {
      send_all(c, "forbidden\n");
      ::close(c);
      continue;
    }
    // One line, within a second: a client that says nothing does not hold
    // the channel.
    std::string line;
    char buf[256];
    while (line.find('\n') == std::string::npos && line.size() < max_command &&
           wait_for(c, POLLIN, 1000)) {
      auto n = ::recv(c, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    if (auto nl = line.find('\n'); nl != std::string::npos)
      line.erase(nl);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    send_all(c, handler_(line));
    ::close(c);
  }
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
