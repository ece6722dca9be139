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

/// Listens on a Unix-domain socket path on a thread of its own. Connections
/// are read side by side (poll), each given `read_deadline` in all to send
/// its line, so clients that connect and say nothing never delay another's
/// command; commands run one after another on that thread.
class control_listener {
public:
  /// Binds `path` and starts answering with `handler`; a connection without
  /// a whole line within `read_deadline` of its accept is closed unanswered.
  /// A socket file left by a process that is gone is replaced; fails
  /// (errc::conflict) when a live process answers on `path`, and
  /// (errc::bad_request) when `path` is something else than a socket or
  /// cannot be bound.
  static core::expected<std::unique_ptr<control_listener>>
  start(std::string path, control_handler handler,
        std::chrono::milliseconds read_deadline = std::chrono::seconds{1});

  /// Stops (see `stop`).
  ~control_listener();

  control_listener(const control_listener&) = delete;
  control_listener& operator=(const control_listener&) = delete;

  /// Stops answering, joins the thread and removes the socket file (if it
  /// is still this listener's); idempotent.
  void stop();

private:
  control_listener(std::string path, int fd, int wake, control_handler h,
                   std::chrono::milliseconds read_deadline);
  void run();

  std::string path_;
  int fd_ = -1;
  int wake_ = -1;
  unsigned long long inode_ = 0;
  control_handler handler_;
  std::chrono::milliseconds read_deadline_;
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
