#include "http/peer_watch.hpp"

#include <cerrno>
#include <sys/socket.h>

namespace mailassay::http {

void watch_peer(asio::ip::tcp::socket& sock, std::function<void()> gone) {
  if (!sock.is_open())
    return;
  // A wait, not a read: RESTinio's own read, when it comes, takes the bytes.
  sock.async_wait(asio::ip::tcp::socket::wait_read,
                  [fd = sock.native_handle(),
                   gone = std::move(gone)](const asio::error_code& ec) {
                    if (ec) // closed or destroyed: nobody asks any more
                      return;
                    char byte;
                    auto n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
                    if (n == 0 || (n < 0 && errno != EAGAIN &&
                                   errno != EWOULDBLOCK && errno != EINTR))
                      gone();
                  });
}

} // namespace mailassay::http
