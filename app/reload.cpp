// A reload (SIGHUP): the settings are read again, checked as at start-up,
// and what may change in a running server is applied; the rest is named in
// the log as taking a restart.
#include "actors/batch/runner.hpp"
#include "actors/log.hpp"
#include "actors/rate_limiter.hpp"
#include "actors/smtp/scheduler.hpp"
#include "app/app.hpp"

namespace mailassay::app {

void reload(const std::optional<std::string>& file, const reload_targets& t) {
  auto env = config::process_environment();
  auto path = file;
  if (!path)
    if (auto i = env.find("MAILASSAY_CONFIG"); i != env.end())
      path = i->second;
  auto next = config::load(path, env);
  if (!next) {
    // Checked like at start-up; one bad value and nothing changes.
    actors::log_event(actors::log_level::warn, "config_reload_refused",
                      {{"why", next.error_value().message},
                       {"kept", "every setting as it was"}});
    return;
  }
  auto& cur = *t.current;
  std::string applied, restart;
  bool smtp = false;
  for (auto& c : config::changes(cur, *next)) {
    if (!c.reloadable) {
      restart += (restart.empty() ? "" : ", ") + c.name;
      continue;
    }
    applied += (applied.empty() ? "" : ", ") + c.name + " " + c.before +
               " -> " + c.after;
    smtp = smtp || c.name.rfind("smtp.", 0) == 0;
  }
  // The limits are read by request threads: each is atomic (live_int).
  auto& l = cur.limits;
  const auto& n = next->limits;
  l.ip_per_minute = n.ip_per_minute;
  l.key_per_minute = n.key_per_minute;
  l.key_per_hour = n.key_per_hour;
  l.key_per_day = n.key_per_day;
  l.widget_device_per_minute = n.widget_device_per_minute;
  l.widget_ip_per_minute = n.widget_ip_per_minute;
  l.login_ip_per_minute = n.login_ip_per_minute;
  l.login_account_per_hour = n.login_account_per_hour;
  l.signup_ip_per_hour = n.signup_ip_per_hour;
  if (t.limiter)
    t.limiter->set_ip_per_minute(n.ip_per_minute);
  cur.batch.rate_under_load = next->batch.rate_under_load;
  if (t.batches)
    t.batches->set_rate_under_load(next->batch.rate_under_load);
  // Nobody but this thread reads these after the start.
  cur.smtp.max_sessions_per_host = next->smtp.max_sessions_per_host;
  cur.smtp.connections_per_second_per_host =
      next->smtp.connections_per_second_per_host;
  cur.smtp.max_rcpts_per_session = next->smtp.max_rcpts_per_session;
  if (smtp && t.scheduler) {
    actors::smtp::scheduler_politeness p;
    p.max_sessions_per_host =
        static_cast<std::size_t>(std::max(0, cur.smtp.max_sessions_per_host));
    p.connections_per_second_per_host =
        cur.smtp.connections_per_second_per_host;
    p.max_rcpts_per_session =
        static_cast<std::size_t>(std::max(1, cur.smtp.max_rcpts_per_session));
    if (!t.scheduler->reconfigure(p))
      actors::log_event(actors::log_level::error, "config_reload_failed",
                        {{"why", "the SMTP scheduler did not answer in 10 s"}});
  }
  if (cur.log.level != next->log.level) {
    cur.log.level = next->log.level;
    actors::init_logging(cur.log.level);
  }
  actors::log_event(actors::log_level::info, "config_reloaded",
                    {{"applied", applied.empty() ? "nothing changed" : applied},
                     {"config", path ? *path : std::string{"(environment)"}}});
  if (!restart.empty())
    actors::log_event(actors::log_level::warn, "config_needs_restart",
                      {{"settings", restart},
                       {"why", "these settings are read at start-up only; "
                               "the old values stay until a restart"}});
}

} // namespace mailassay::app
