#include "net/blocking_socket.hpp"

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>

namespace mailassay::net {

bool wait_for(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR)
      continue;
    return n > 0;
  }
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::optional<std::string> read_to_end(int fd,
                                       std::chrono::milliseconds timeout) {
  std::string answer;
  char buf[16384];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 ||
        !wait_for(fd, POLLIN, static_cast<int>(left.count())))
      return std::nullopt;
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return answer;
    answer.append(buf, static_cast<std::size_t>(n));
  }
}

} // namespace mailassay::net
