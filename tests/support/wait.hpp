#pragma once

// Waiting in tests: on a condition, never on a sleep of a guessed length
// (the suite must pass on a loaded machine).

#include <chrono>
#include <functional>

namespace mailassay::testing {

/// Polls `ok()` every `poll` until it holds or `limit` passes; returns
/// whether it held. The limit is generous: only a failure waits that long.
bool eventually(const std::function<bool()>& ok,
                std::chrono::milliseconds limit = std::chrono::seconds(10),
                std::chrono::milliseconds poll = std::chrono::milliseconds(5));

/// The steady clock's reading in milliseconds since its epoch, as the
/// politeness and catch-all stores take the time.
std::chrono::milliseconds steady_now();

} // namespace mailassay::testing
