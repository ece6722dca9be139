#pragma once

// Asking an actor from outside the actor system's threads and waiting for
// its yes: the stops and the last flush at shutdown, where the caller (the
// composition root, a destructor) must know the actor is done before it
// goes on.

#include "log/log.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <utility>

namespace mailassay::actors {

/// Sends `xs...` to `to` and waits up to `timeout` for its `bool` answer;
/// returns it, or false when `to` fails or does not answer in time (logged
/// as `failure_event` at `severity` with the error, unless the event is
/// null). Blocks the calling thread: never call it from inside an actor.
template <class Handle, class... Ts>
bool blocking_ask(caf::actor_system& sys, const Handle& to,
                  std::chrono::milliseconds timeout, log::level severity,
                  const char* failure_event, Ts&&... xs) {
  bool answer = false;
  caf::scoped_actor self{sys};
  self->request(to, timeout, std::forward<Ts>(xs)...)
      .receive(
          [&](bool yes) { answer = yes; },
          [&](const caf::error& err) {
            if (failure_event)
              log::event(severity, failure_event, {{"error", sys.render(err)}});
          });
  return answer;
}

} // namespace mailassay::actors
