#pragma once

// The SMTP scheduler actor's state (actors/smtp/scheduler.cpp) and the
// settings it derives per route (scheduler_config.cpp). Internal to
// actors/smtp: nothing outside the scheduler includes it.

#include "actors/smtp/scheduler.hpp"
#include "core/smtp/address_policy.hpp"
#include "core/smtp/provider_habits.hpp"
#include "core/smtp/result_cache.hpp"
#include "core/smtp/route_plan.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace mailassay::actors::smtp::scheduling {

/// One MX host of a route and its addresses as they arrive.
struct mx_host {
  std::string name;
  std::vector<std::string> v4;
  std::vector<std::string> v6;
};

/// A caller that arrived while the route's MX hosts were being resolved.
struct pending_add {
  std::string address;
  core::smtp::route_waiter waiter;
};

/// One mail route: a domain (or, without sharing, one caller's probe).
struct route_state {
  std::string domain;
  std::vector<mx_host> hosts;
  std::size_t lookups = 0; ///< MX host answers still awaited.
  std::vector<pending_add> pending;
  std::optional<core::smtp::route_plan> plan;
  /// Waiting in a host's queue for a slot.
  bool queued = false;
  /// The route's timer in force, and its generation.
  std::optional<core::limits::millis> timer_at;
  std::uint64_t gen = 0;
  /// Addresses waiting (for the counters' deltas).
  std::int64_t waiting = 0;
  /// What the route's provider is known to answer (issue #30).
  core::smtp::provider_habits habits;
};

/// A caller and where its answer goes.
struct caller {
  std::string route;
  caf::typed_response_promise<core::smtp::address_outcome> promise;
  /// Its provider's index in `scheduler_counters::provider_names()`.
  std::size_t provider = 0;
};

/// A session and whose it is.
struct session_ref {
  std::string route;
  std::string host;
  /// The budget it holds a slot of: its host, or its provider (issue #30).
  std::string slot;
};

/// The scheduler actor's state: its settings, routes, callers and sessions.
struct scheduler_state {
  scheduler_config config;
  core::smtp::target_policy policy;
  scheduler_parts parts;
  std::shared_ptr<scheduler_counters> counters;
  std::optional<core::smtp::result_cache> results;
  std::unordered_map<std::string, route_state> routes;
  std::unordered_map<std::uint64_t, caller> callers;
  std::unordered_map<std::uint64_t, session_ref> sessions;
  /// Routes waiting for a slot of a host, first come first served.
  std::unordered_map<std::string, std::deque<std::string>> host_queues;
  std::uint64_t next_caller = 0;
  std::uint64_t next_session = 0;
  bool stopped = false;
  static inline const char* name = "smtp_scheduler";
};

/// The per-host (or per-provider) session and connection limits of `c`.
core::smtp::host_limits_config limits_config(const scheduler_config& c);

/// The settings every route starts from.
core::smtp::route_settings route_settings_of(const scheduler_config& c);

/// The settings of route `rt`: RCPTs per session are its provider's when
/// smtp.provider_limits sets them (the provider of its first MX host),
/// else the per-host value.
core::smtp::route_settings settings_of_route(const scheduler_config& c,
                                             const route_state& rt);

} // namespace mailassay::actors::smtp::scheduling
