#pragma once

// What the server gives every gated socket (http/gated_socket.hpp) of an I/O
// context: the gate's limits, the read timeout, how to render a refusal and
// how to admit an upload's head. An asio service, so no global state.

#include "http/body_gate.hpp"

#include <restinio/all.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace mailassay::http {

class gated_socket;

/// What every socket made on an I/O context needs from its server: the
/// gate's limits, the read timeout, and how to render a refusal (an asio
/// service, so no global state).
class gate_service : public asio::execution_context::service {
public:
  /// The service's identity for `asio::use_service`.
  inline static asio::execution_context::id id;

  /// Made by `asio::use_service` on first use.
  explicit gate_service(asio::execution_context& ctx)
      : asio::execution_context::service(ctx) {}

  /// Body limits; set by the server before it accepts connections.
  body_limits limits;

  /// Head limits; set by the server before it accepts connections.
  head_limits head;

  /// How long a request may take to arrive, from the moment the server
  /// waits for it (`http.read_timeout_ms`); then a request partly received
  /// is answered 408.
  std::chrono::milliseconds read_timeout{60000};

  /// The whole response (head and body) refusing a request of the client
  /// at `peer` with `status` and `message`; set by the server.
  std::function<std::string(const asio::ip::address& peer, int status,
                            const std::string& message)>
      render;

  /// The answer to an upload's head (issue #28): an empty `refusal` (the
  /// whole response otherwise) admits it, holding `slot` until its body
  /// was read or the connection ends.
  struct upload_admission {
    std::string refusal;
    std::shared_ptr<void> slot;
  };

  /// Decides on the head of an upload before any byte of its body is read
  /// (set with `limits.check_uploads`); calls `done` once, on any thread.
  std::function<void(std::string head, const asio::ip::address& peer,
                     std::function<void(upload_admission)> done)>
      admit_upload;

  /// The socket whose bytes RESTinio parses now (on the context's thread):
  /// the request it completes is dispatched meanwhile, and finds its
  /// connection's socket here. Null otherwise.
  gated_socket* parsing = nullptr;

private:
  void shutdown() override {}
};

} // namespace mailassay::http
