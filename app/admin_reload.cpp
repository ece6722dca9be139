// `mailassay admin reload`: asks the running server on this machine to
// reload its settings (what SIGHUP does) through its control socket, and
// prints the server's report.
#include "app/app.hpp"
#include "net/control_socket.hpp"

#include <iostream>

namespace mailassay::app {

int admin_reload(const config::settings& cfg, const std::string& socket) {
  auto path = socket.empty() ? cfg.control.socket : socket;
  if (path.empty()) {
    std::cerr << "mailassay: admin reload: no control socket (control.socket "
                 "is empty; use --socket or kill -HUP the server)\n";
    return 2;
  }
  // A reload waits up to 10 s for the SMTP scheduler.
  auto answer =
      net::control_request(path, "reload", std::chrono::milliseconds{30000});
  if (!answer) {
    std::cerr << "mailassay: admin reload: " << answer.error_value().message
              << " (is `mailassay serve` running with control.socket = " << path
              << "?)\n";
    return 1;
  }
  // "ok", "refused", "failed" or "unknown", then the report.
  auto nl = answer->find('\n');
  auto status = answer->substr(0, nl);
  auto report =
      nl == std::string::npos ? std::string{} : answer->substr(nl + 1);
  if (status == "ok") {
    std::cout << report;
    return 0;
  }
  std::cerr << "mailassay: admin reload: "
            << (report.empty() ? "the server refused: " + status : report);
  return 1;
}

} // namespace mailassay::app
