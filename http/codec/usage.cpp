#include "http/codec/usage.hpp"

namespace mailassay::http::codec {

json key_stats(const core::usage::key_stats& s) {
  auto days = json::array();
  for (auto& d : s.requests_by_day)
    days.push_back({{"date", d.day},
                    {"requests", d.requests},
                    {"successful", d.successful},
                    {"credits", d.credits}});
  return {{"totalRequests", s.total_requests},
          {"successRate", s.success_rate},
          {"creditsConsumed", s.credits_consumed},
          {"topEmails", s.top_emails},
          {"requestsByDay", days}};
}

json organization_usage(const use_cases::accounts::organization_usage& u) {
  auto keys = json::array();
  for (auto& k : u.keys)
    keys.push_back({{"id", k.id},
                    {"name", k.name.empty() ? json(nullptr) : json(k.name)},
                    {"mode", k.test ? "test" : "live"},
                    {"requests", k.requests},
                    {"successful", k.successful},
                    {"credits", k.credits}});
  // Objects keep their keys sorted: the same text as one built whole.
  auto out = key_stats(u.totals);
  out["days"] = u.days;
  out["keys"] = keys;
  return out;
}

} // namespace mailassay::http::codec
