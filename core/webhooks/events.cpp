#include "core/webhooks/events.hpp"

#include <algorithm>
#include <array>

namespace mailassay::core::webhooks {

namespace {

constexpr std::array<event_type, 5> subscribable{
    event_type::batch_completed, event_type::batch_failed,
    event_type::batch_cancelled, event_type::credits_low,
    event_type::key_revoked};

constexpr std::array<event_type, 6> every{
    event_type::batch_completed, event_type::batch_failed,
    event_type::batch_cancelled, event_type::credits_low,
    event_type::key_revoked,     event_type::ping};

} // namespace

std::string_view to_string(event_type e) {
  switch (e) {
    case event_type::batch_completed: return "batch.completed";
    case event_type::batch_failed: return "batch.failed";
    case event_type::batch_cancelled: return "batch.cancelled";
    case event_type::credits_low: return "credits.low";
    case event_type::key_revoked: return "key.revoked";
    case event_type::ping: return "ping";
  }
  return "ping";
}

std::optional<event_type> parse_event_type(std::string_view name) {
  for (auto e : every)
    if (to_string(e) == name)
      return e;
  return std::nullopt;
}

std::span<const event_type> subscribable_events() {
  return subscribable;
}

expected<std::vector<event_type>>
parse_subscription(std::span<const std::string> names) {
  std::vector<std::string> problems;
  std::vector<event_type> seen;
  if (names.empty())
    problems.push_back("events must contain at least one event");
  for (const auto& name : names) {
    auto e = parse_event_type(name);
    if (!e || *e == event_type::ping) {
      std::string shown = name.size() > 64 ? name.substr(0, 64) : name;
      problems.push_back("events has an unknown event \"" + shown +
                         "\" (known: batch.completed, batch.failed, "
                         "batch.cancelled, credits.low, key.revoked)");
    } else if (std::find(seen.begin(), seen.end(), *e) != seen.end()) {
      problems.push_back("events lists \"" + name + "\" more than once");
    } else {
      seen.push_back(*e);
    }
  }
  if (!problems.empty()) {
    auto err = make_error(errc::validation_failed, "");
    err.details = std::move(problems);
    return err;
  }
  std::vector<event_type> out;
  for (auto e : subscribable)
    if (std::find(seen.begin(), seen.end(), e) != seen.end())
      out.push_back(e);
  return out;
}

std::string join_events(std::span<const event_type> events) {
  std::string out;
  for (auto e : events) {
    if (!out.empty())
      out += ',';
    out += to_string(e);
  }
  return out;
}

std::vector<event_type> split_events(std::string_view stored) {
  std::vector<event_type> out;
  while (!stored.empty()) {
    auto comma = stored.find(',');
    auto name = stored.substr(0, comma);
    if (auto e = parse_event_type(name); e && *e != event_type::ping)
      out.push_back(*e);
    if (comma == std::string_view::npos)
      break;
    stored.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<event_type> batch_end_event(batch::job_status s) {
  switch (s) {
    case batch::job_status::completed: return event_type::batch_completed;
    case batch::job_status::failed: return event_type::batch_failed;
    case batch::job_status::cancelled: return event_type::batch_cancelled;
    case batch::job_status::queued:
    case batch::job_status::processing: return std::nullopt;
  }
  return std::nullopt;
}

bool crossed_below(std::int64_t before, std::int64_t after,
                   std::int64_t threshold) {
  return threshold > 0 && before >= threshold && after < threshold;
}

bool may_manage(account::role r) {
  return r == account::role::owner || r == account::role::admin;
}

} // namespace mailassay::core::webhooks
