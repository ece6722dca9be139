// How the scheduler's answers are classed and counted, for /metrics.
#include "actors/smtp/scheduler.hpp"

#include <algorithm>
#include <mutex>

namespace mailassay::actors::smtp {

answer_class classify_answer(const core::smtp::address_outcome& o) {
  switch (o.rcpt.verdict) {
    case core::smtp::rcpt_verdict::accepted: return answer_class::accepted;
    case core::smtp::rcpt_verdict::no_such_user:
    case core::smtp::rcpt_verdict::disabled:
    case core::smtp::rcpt_verdict::mailbox_full: return answer_class::rejected;
    case core::smtp::rcpt_verdict::greylisted_or_throttled:
      return answer_class::greylisted;
    case core::smtp::rcpt_verdict::blocked_by_policy:
      return answer_class::policy_blocked;
    default: break;
  }
  if (o.timed_out)
    return answer_class::timeout;
  if (!o.answered)
    return answer_class::refused;
  return answer_class::other;
}

std::string_view to_string(answer_class c) {
  switch (c) {
    case answer_class::accepted: return "accepted";
    case answer_class::rejected: return "rejected";
    case answer_class::greylisted: return "greylisted";
    case answer_class::timeout: return "timeout";
    case answer_class::refused: return "refused";
    case answer_class::policy_blocked: return "policy_blocked";
    case answer_class::other: return "other";
  }
  return "other";
}

std::map<std::string, host_counters>
scheduler_counters::hosts(std::chrono::milliseconds now) const {
  std::lock_guard guard{host_mutex};
  return host_table.in_use(now);
}

std::uint64_t scheduler_counters::hosts_untracked() const {
  std::lock_guard guard{host_mutex};
  return host_table.untracked();
}

void scheduler_counters::set_providers(const core::provider::table* table) {
  std::vector<std::string> names;
  if (table)
    names = table->names();
  names.emplace_back("none");
  provider_answers_.reset(new class_counts[names.size()]{});
  provider_names_ = std::move(names);
}

std::size_t scheduler_counters::provider_index(std::string_view name) const {
  auto last = provider_names_.size() - 1;
  auto it = std::lower_bound(provider_names_.begin(),
                             provider_names_.begin() + last, name);
  return it != provider_names_.begin() + last && *it == name
             ? static_cast<std::size_t>(it - provider_names_.begin())
             : last;
}

} // namespace mailassay::actors::smtp
