#include "http/codec_usage.hpp"

namespace mailassay::http::codec {

nlohmann::json
organization_usage(const actors::accounts::organization_usage& u) {
  using nlohmann::json;
  auto days = json::array();
  for (auto& d : u.totals.requests_by_day)
    days.push_back({{"date", d.day},
                    {"requests", d.requests},
                    {"successful", d.successful},
                    {"credits", d.credits}});
  auto keys = json::array();
  for (auto& k : u.keys)
    keys.push_back({{"id", k.id},
                    {"name", k.name.empty() ? json(nullptr) : json(k.name)},
                    {"mode", k.test ? "test" : "live"},
                    {"requests", k.requests},
                    {"successful", k.successful},
                    {"credits", k.credits}});
  return {{"days", u.days},
          {"totalRequests", u.totals.total_requests},
          {"successRate", u.totals.success_rate},
          {"creditsConsumed", u.totals.credits_consumed},
          {"topEmails", u.totals.top_emails},
          {"requestsByDay", days},
          {"keys", keys}};
}

} // namespace mailassay::http::codec
