// The scheduler's settings: from the [smtp] section, and per route.
#include "actors/smtp/scheduler.hpp"
#include "actors/smtp/scheduler_state.hpp"
#include "config/settings.hpp"
#include "core/smtp/address_policy.hpp"

#include <algorithm>
#include <utility>

namespace mailassay::actors::smtp {

scheduler_config make_scheduler_config(const config::smtp_settings& s,
                                       std::string_view hostname) {
  scheduler_config c;
  c.identity.helo = core::smtp::choose_helo(s.helo, hostname);
  c.identity.mail_from = s.mail_from;
  c.force_identity = s.force_identity;
  c.port = static_cast<std::uint16_t>(s.port);
  c.tls = s.tls;
  c.verify_tls = s.tls_verify;
  c.allow_private_targets = s.allow_private_targets;
  c.retry_delays.clear();
  for (auto ms : s.retry_delays_ms)
    c.retry_delays.push_back(std::chrono::milliseconds{ms});
  c.max_sessions_per_host =
      static_cast<std::size_t>(std::max(0, s.max_sessions_per_host.get()));
  c.connections_per_second_per_host = s.connections_per_second_per_host;
  c.max_rcpts_per_session =
      static_cast<std::size_t>(std::max(1, s.max_rcpts_per_session.get()));
  // Checked when the settings were loaded.
  if (auto limits = core::smtp::parse_provider_limits(s.provider_limits))
    c.provider_limits = std::move(*limits);
  c.share_sessions = s.share_sessions;
  c.session_linger = std::chrono::milliseconds{s.session_linger_ms};
  c.result_cache_ttl = std::chrono::seconds{s.result_cache_seconds};
  c.catch_all_ttl = std::chrono::seconds{s.catch_all_ttl_seconds};
  c.socks5_proxy = s.socks5_proxy;
  c.source_address = s.source_address;
  c.io_threads = s.io_threads;
  c.host_metrics_idle = std::chrono::seconds{s.host_metrics_idle_seconds};
  c.host_metrics_max_hosts = static_cast<std::size_t>(
      std::max<std::int64_t>(1, s.host_metrics_max_hosts));
  return c;
}

namespace scheduling {

using core::limits::millis;

core::smtp::host_limits_config limits_config(const scheduler_config& c) {
  return {c.max_sessions_per_host, c.connections_per_second_per_host,
          c.provider_limits};
}

core::smtp::route_settings route_settings_of(const scheduler_config& c) {
  core::smtp::route_settings s;
  s.retry_delays.clear();
  for (auto d : c.retry_delays)
    s.retry_delays.push_back(d);
  s.max_rcpts_per_session = c.max_rcpts_per_session;
  s.min_step = c.min_step;
  s.max_step = c.max_step;
  s.tls = c.tls;
  // Lingering only helps when others may come for the same sessions.
  s.linger = c.share_sessions
                 ? std::chrono::duration_cast<millis>(c.session_linger)
                 : millis{0};
  return s;
}

core::smtp::route_settings settings_of_route(const scheduler_config& c,
                                             const route_state& rt) {
  auto s = route_settings_of(c);
  if (!rt.hosts.empty())
    s.max_rcpts_per_session = core::smtp::rcpts_per_session(
        rt.hosts.front().name, c.providers.get(), c.provider_limits,
        c.max_rcpts_per_session);
  return s;
}

} // namespace scheduling

} // namespace mailassay::actors::smtp
