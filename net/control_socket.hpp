#pragma once

// The operator's control channel of a running server: a Unix-domain socket
// on the server's machine (mode 0600, and the peer must run as the server's
// user or root, checked with SO_PEERCRED), one command line in, one text
// answer out. File permissions are its authentication: whoever may connect
// could as well send the process a signal. `mailassay admin reload` speaks
// it.

#include "core/base/expected.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace mailassay::net {

/// Answers one command line (without its newline).
using control_handler = std::function<std::string(std::string_view command)>;

/// Listens on a Unix-domain socket path on a thread of its own and answers
/// one connection at a time.
class control_listener {
public:
  /// Binds `path` and starts answering with `handler`. A socket file left
  /// by a process that is gone is replaced; fails (errc::conflict) when a
  /// live process answers on `path`, and (errc::bad_request) when `path`
  /// is something else than a socket or cannot be bound.
  static core::expected<std::unique_ptr<control_listener>>
  start(std::string path, control_handler handler);

  /// Stops (see `stop`).
  ~control_listener();

  control_listener(const control_listener&) = delete;
  control_listener& operator=(const control_listener&) = delete;

  /// Stops answering, joins the thread and removes the socket file (if it
  /// is still this listener's); idempotent.
  void stop();

private:
  control_listener(std::string path, int fd, int wake, control_handler h);
  void run();

  std::string path_;
  int fd_ = -1;
  int wake_ = -1;
  unsigned long long inode_ = 0;
  control_handler handler_;
  std::thread thread_;
};

/// Sends `command` to the listener on `path` and returns its answer;
/// errc::unavailable when nothing answers there, errc::forbidden when the
/// socket may not be opened, errc::request_timeout without an answer in
/// `timeout`.
core::expected<std::string> control_request(const std::string& path,
                                            std::string_view command,
                                            std::chrono::milliseconds timeout);

} // namespace mailassay::net
