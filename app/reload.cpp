// A reload (SIGHUP or `mailassay admin reload`): the settings are read
// again, checked as at start-up, and what may change in a running server is
// applied; the rest is named in the log as taking a restart.
#include "actors/batch/runner.hpp"
#include "actors/rate_limiter.hpp"
#include "actors/smtp/scheduler.hpp"
#include "app/app.hpp"
#include "config/risk_files.hpp"
#include "log/log.hpp"

namespace mailassay::app {

namespace {

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

} // namespace

reload_report reload(const std::optional<std::string>& file,
                     const reload_targets& t) {
  reload_report r;
  auto env = config::process_environment();
  auto path = config::file_of(file, env);
  r.config = path ? *path : std::string{"(environment)"};
  auto next = config::load(path, env);
  if (!next) {
    // Checked like at start-up; one bad value and nothing changes.
    r.refused = true;
    r.why = next.error_value().message;
    log::event(log::level::warn, "config_reload_refused",
               {{"why", r.why}, {"kept", "every setting as it was"}});
    return r;
  }
  // Per-provider limits name providers of the table the new settings
  // point at (read again: it may have changed too).
  if (!next->smtp.provider_limits.get().empty()) {
    auto table = config::load_provider_table(next->risk);
    auto ok = table ? config::check_provider_limits(next->smtp, **table)
                    : core::expected<core::unit>{table.error_value()};
    if (!ok) {
      r.refused = true;
      r.why = ok.error_value().message;
      log::event(log::level::warn, "config_reload_refused",
                 {{"why", r.why}, {"kept", "every setting as it was"}});
      return r;
    }
  }
  auto& cur = *t.current;
  bool smtp = false;
  bool level = cur.log.level.get() != next->log.level.get();
  for (auto& c : config::changes(cur, *next)) {
    if (!c.reloadable) {
      r.restart.push_back(c.name);
      continue;
    }
    r.applied.push_back(c.name + " " + c.before + " -> " + c.after);
    smtp = smtp || c.name.rfind("smtp.", 0) == 0;
  }
  // Each reloadable setting is a config::live value: other threads may
  // read it while it changes.
  config::apply_reloadable(cur, *next);
  if (t.limiter)
    t.limiter->set_ip_per_minute(cur.limits.ip_per_minute);
  if (t.batches)
    t.batches->set_rate_under_load(cur.batch.rate_under_load);
  if (smtp && t.scheduler) {
    actors::smtp::scheduler_politeness p;
    p.max_sessions_per_host = static_cast<std::size_t>(
        std::max(0, cur.smtp.max_sessions_per_host.get()));
    p.connections_per_second_per_host =
        cur.smtp.connections_per_second_per_host;
    p.max_rcpts_per_session = static_cast<std::size_t>(
        std::max(1, cur.smtp.max_rcpts_per_session.get()));
    if (auto limits =
            core::smtp::parse_provider_limits(cur.smtp.provider_limits))
      p.provider_limits = std::move(*limits);
    if (!t.scheduler->reconfigure(p)) {
      r.failure = "the SMTP scheduler did not answer in 10 s";
      log::event(log::level::error, "config_reload_failed",
                 {{"why", r.failure}});
    }
  }
  if (level)
    log::init(cur.log.level);
  log::event(
      log::level::info, "config_reloaded",
      {{"applied", r.applied.empty() ? "nothing changed" : joined(r.applied)},
       {"config", r.config}});
  if (!r.restart.empty())
    log::event(log::level::warn, "config_needs_restart",
               {{"settings", joined(r.restart)},
                {"why", "these settings are read at start-up only; "
                        "the old values stay until a restart"}});
  return r;
}

std::string to_text(const reload_report& r) {
  std::string out;
  if (r.refused)
    return "refused: " + r.why + "\nevery setting kept as it was\n";
  out += "reloaded " + r.config + "\n";
  if (r.applied.empty())
    out += "applied: nothing changed\n";
  for (auto& a : r.applied)
    out += "applied: " + a + "\n";
  for (auto& n : r.restart)
    out += "needs a restart (old value kept): " + n + "\n";
  if (!r.failure.empty())
    out += "failed: " + r.failure + "\n";
  return out;
}

} // namespace mailassay::app
