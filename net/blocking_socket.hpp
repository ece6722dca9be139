#pragma once

// Blocking writes and reads of a connected socket for the command line's
// one-shot exchanges (`mailassay status` over HTTP, `mailassay admin` over
// the control socket) and the control socket's own thread: never used on an
// event loop.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::net {

/// Waits until `fd` has one of `events` (poll(2): POLLIN, POLLOUT), at most
/// `ms` milliseconds, resuming after signals; false when time ran out.
bool wait_for(int fd, short events, int ms);

/// Writes all of `data` to `fd` (no SIGPIPE), resuming after signals;
/// false once the peer is gone.
bool send_all(int fd, std::string_view data);

/// Reads from `fd` until the peer closes its side (or the connection
/// fails), at most `timeout` in all; nullopt when time ran out first.
std::optional<std::string> read_to_end(int fd,
                                       std::chrono::milliseconds timeout);

} // namespace mailassay::net
