#pragma once

// Where the scheduler's sessions run. The scheduler decides; a runner owns
// the sockets: it opens an open-ended core::smtp::session, reports when it
// is ready for work (`session_idle`) and when it ends (`session_ended`) as
// messages to the scheduler, and passes on `give` / `finish`. The service
// runs them on net::smtp_client (asio, no thread per session); the
// scheduler's tests script a double on CAF's deterministic scheduler.

#include "actors/messages.hpp"
#include "core/smtp/session.hpp"
#include "net/smtp_client.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace mailassay::actors::smtp {

/// One session to open.
struct session_spec {
  /// The scheduler's id of the session (its messages name it).
  std::uint64_t id = 0;
  /// Where to and how long.
  net::smtp_dial dial;
  /// Who we are and how we talk (HELO, sender, TLS).
  core::smtp::session_config config;
};

/// Runs the scheduler's sessions. Thread-safe; never blocks.
class session_runner {
public:
  virtual ~session_runner() = default;

  /// Opens session `spec.id`; reports to `events` (session_idle each time
  /// it is ready for an address, session_ended once).
  virtual void open(session_spec spec, scheduler_actor events) = 0;

  /// Session `id` asks `address` next, with the catch-all `probe` after it
  /// (empty: none). Ignored when the session is gone.
  virtual void give(std::uint64_t id, std::string address,
                    std::string probe) = 0;

  /// Session `id` sends QUIT. Ignored when the session is gone.
  virtual void finish(std::uint64_t id) = 0;

  /// Ends every session (each reports session_ended) and stops; call from
  /// outside the actor system's threads.
  virtual void shutdown() = 0;
};

/// Returns a runner on `client`.
std::shared_ptr<session_runner>
net_session_runner(std::shared_ptr<net::smtp_client> client);

} // namespace mailassay::actors::smtp
