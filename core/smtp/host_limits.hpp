#pragma once

// Politeness towards each MX host: at most N sessions open at once and at
// most M new connections per second, so that a batch of addresses at one
// provider does not look like (or become) a flood. Pure: the caller passes
// the time and queues whoever is refused.

#include "core/base/expected.hpp"
#include "core/limits/token_bucket.hpp"
#include "core/provider/table.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mailassay::core::smtp {

/// One provider's own limits (issue #30); an unset value takes the
/// per-host default.
struct budget_override {
  std::optional<std::size_t> max_sessions;
  std::optional<std::int64_t> connections_per_second;
  /// RCPT commands per session to the provider's hosts (at least 1).
  std::optional<std::size_t> max_rcpts_per_session;

  /// Compares every value.
  friend bool operator==(const budget_override&,
                         const budget_override&) = default;
};

/// The limits of one budget.
struct budget_limits {
  std::size_t max_sessions = 4;
  std::int64_t connections_per_second = 0;
};

/// Limits applied to every MX host, or to every provider as a whole.
struct host_limits_config {
  /// Sessions open at once per host; 0: unlimited.
  std::size_t max_sessions = 4;
  /// New connections per second per host (burst of the same size); 0:
  /// unlimited.
  std::int64_t connections_per_second = 0;
  /// Overrides by budget key (`budget_key`: "provider:<name>").
  std::map<std::string, budget_override, std::less<>> overrides;

  /// Returns the limits of budget `key`: its override, else the defaults.
  budget_limits limits_of(std::string_view key) const;
};

/// Returns the key of the budget a session to MX host `host` draws from
/// (issue #30): "provider:<name>" when `providers` names the host's
/// provider, so that all MX hosts of one provider share one budget; else
/// the host itself, as before. A host name never holds ':'.
std::string budget_key(std::string_view host, const provider::table* providers);

/// Parses per-provider limits, entries
/// "name=sessions[/per_second[/rcpts_per_session]]" (e.g. "google=2/5",
/// "yahoo=1", "outlook=/1", "google=2//10"), into overrides keyed
/// "provider:<name>". A malformed entry -> errc::bad_request naming it.
expected<std::map<std::string, budget_override, std::less<>>>
parse_provider_limits(const std::vector<std::string>& entries);

/// Returns the provider names of `overrides` (keys "provider:<name>") that
/// `known` does not hold, in order: an override no MX host can ever use is
/// a typo the operator is told of (at start and at reload).
/// Returns the RCPT commands per session to MX host `host`: its provider's
/// override in `overrides` (keys "provider:<name>", `budget_key`) when it
/// has one, else `per_host`.
std::size_t rcpts_per_session(
    std::string_view host, const provider::table* providers,
    const std::map<std::string, budget_override, std::less<>>& overrides,
    std::size_t per_host);

std::vector<std::string> unknown_providers(
    const std::map<std::string, budget_override, std::less<>>& overrides,
    const provider::table& known);

/// The answer to a request to open a session.
struct admission {
  /// The session may open now; it holds a slot until `close`.
  bool granted = false;
  /// When refused by the connection rate: the time to ask again. Empty when
  /// refused because every slot is taken (ask again after a `close`).
  std::optional<limits::millis> retry_at;
  /// Refused because every slot is taken, also when `retry_at` is set (a
  /// shared store cannot hear other processes' `close`, so it says when to
  /// ask again): an idle session of this process may give its slot up.
  bool full = false;
  /// Neither granted nor refused yet: a shared store is asking; it calls
  /// the wake-up (`set_wake`) with the host when the answer is in, and the
  /// next `try_open` for that host gets it.
  bool pending = false;
};

/// Per-MX-host politeness as the SMTP scheduler sees it: a session holds a
/// slot of its host from its connection to its end, and each connection
/// takes a token of the host's rate. The process-local `host_limits`
/// implements it; a store shared by several processes (e.g. Redis with
/// atomic scripts) can too, answering from a local lease it renews.
class host_slots {
public:
  virtual ~host_slots() = default;

  /// Asks to open a session to `host` at `now`: takes a slot and a
  /// connection token, or neither.
  virtual admission try_open(std::string_view host, limits::millis now) = 0;

  /// Gives back the slot of a session to `host` that has ended.
  virtual void close(std::string_view host, limits::millis now) = 0;

  /// Applies new limits from `now` on (a configuration reload): sessions
  /// already open stay open, new ones follow `config`.
  virtual void reconfigure(const host_limits_config& config,
                           limits::millis now) = 0;

  /// Where a store that answers `pending` reports that the answer for a
  /// host is in (from any thread); the local store never calls it.
  virtual void set_wake(std::function<void(std::string host)> wake) {
    (void)wake;
  }
};

/// Per-host session slots and connection-rate buckets, keyed by host name
/// (lower-case), in this process. Hosts without open sessions and with a
/// full bucket are forgotten, so the table holds only hosts in recent use.
class host_limits final : public host_slots {
public:
  /// Applies `config` to every host.
  explicit host_limits(host_limits_config config = {});

  /// Asks to open a session to `host` at `now`: takes a slot and a
  /// connection token, or neither.
  admission try_open(std::string_view host, limits::millis now) override;

  /// Gives back the slot of a session to `host` that has ended.
  void close(std::string_view host, limits::millis now) override;

  /// Applies new limits from `now` on; each host's connection bucket keeps
  /// the tokens it has used (`token_bucket::reshape`).
  void reconfigure(const host_limits_config& config,
                   limits::millis now) override;

  /// Returns the limits in force.
  const host_limits_config& config() const { return config_; }

  /// Returns the sessions open to `host`.
  std::size_t open_sessions(std::string_view host) const;

  /// Returns the number of hosts tracked.
  std::size_t hosts() const { return hosts_.size(); }

  /// Forgets idle hosts whose bucket is full at `now`.
  void sweep(limits::millis now);

private:
  /// One host's state.
  struct entry {
    std::size_t open = 0;
    std::optional<limits::token_bucket> bucket;
  };

  /// Returns whether `e` may be forgotten at `now`.
  bool idle(const entry& e, limits::millis now) const;

  host_limits_config config_;
  std::unordered_map<std::string, entry> hosts_;
  /// Table size that triggers the next sweep.
  std::size_t sweep_at_ = 1024;
};

} // namespace mailassay::core::smtp
