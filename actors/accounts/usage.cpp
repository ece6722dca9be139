// The organization-wide usage behind the dashboard's overview: the per-key
// counters of docs/usage-stats.md summed over the organization's keys.
#include "actors/accounts/use_cases.hpp"
#include "core/base/time_format.hpp"
#include "core/usage/calendar.hpp"

#include <unordered_map>

namespace mailassay::actors::accounts {

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

  std::vector<core::usage::day_counts> stored;
  stored.reserve(rows->size());
  for (auto& r : *rows)
    stored.push_back({r.day, r.requests, r.successful, r.credits});
  auto totals = core::usage::compute(stored, *distinct, today, days);
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

} // namespace mailassay::actors::accounts
