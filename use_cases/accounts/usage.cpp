// Usage statistics (docs/usage-stats.md): one key's counters, and the
// organization-wide usage behind the dashboard's overview, the per-key
// counters summed over the organization's keys.
#include "core/base/time_format.hpp"
#include "core/usage/calendar.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <unordered_map>

namespace mailassay::use_cases::accounts {

namespace {

// The statistics of stored days and a distinct address count.
expected<core::usage::key_stats>
totals_of(const std::vector<storage::usage_day>& rows, std::int64_t distinct,
          const std::string& today, int days) {
  std::vector<core::usage::day_counts> stored;
  stored.reserve(rows.size());
  for (auto& r : rows)
    stored.push_back({r.day, r.requests, r.successful, r.credits});
  return core::usage::compute(stored, distinct, today, days);
}

} // namespace

expected<core::usage::key_stats> usage_of_key(account_env& env,
                                              const principal& who,
                                              const std::string& key_id,
                                              int days) {
  auto key = get_key(env, who, key_id);
  if (!key)
    return std::move(key).error_value();
  auto today = core::utc_day(env.now);
  auto from = core::usage::window_start(today, days);
  if (!from)
    return std::move(from).error_value();
  auto rows = env.db.usage_between(key_id, *from, today);
  if (!rows)
    return std::move(rows).error_value();
  auto distinct = env.db.distinct_addresses(key_id, *from, today);
  if (!distinct)
    return std::move(distinct).error_value();
  return totals_of(*rows, *distinct, today, days);
}

expected<organization_usage>
usage_of_organization(account_env& env, const principal& who, int days) {
  const auto& org = who.organization_id();
  auto today = core::utc_day(env.now);
  auto from = core::usage::window_start(today, days);
  if (!from)
    return std::move(from).error_value();
  auto rows = env.db.organization_usage_between(org, *from, today);
  if (!rows)
    return std::move(rows).error_value();
  auto distinct = env.db.organization_distinct_addresses(org, *from, today);
  if (!distinct)
    return std::move(distinct).error_value();
  auto by_key = env.db.organization_usage_by_key(org, *from, today);
  if (!by_key)
    return std::move(by_key).error_value();
  auto keys = env.db.list_api_keys(org);
  if (!keys)
    return std::move(keys).error_value();

  auto totals = totals_of(*rows, *distinct, today, days);
  if (!totals)
    return std::move(totals).error_value();

  std::unordered_map<std::string, const acc::api_key*> named;
  for (auto& k : *keys)
    named.emplace(k.id, &k);
  organization_usage out;
  out.days = days;
  out.totals = std::move(*totals);
  for (auto& u : *by_key) {
    key_usage_view v;
    v.id = u.key_id;
    if (auto i = named.find(u.key_id); i != named.end()) {
      v.name = i->second->name;
      v.test = acc::mode_of(*i->second) == acc::key_mode::test;
    }
    v.requests = u.requests;
    v.successful = u.successful;
    v.credits = u.credits;
    out.keys.push_back(std::move(v));
  }
  return out;
}

} // namespace mailassay::use_cases::accounts
