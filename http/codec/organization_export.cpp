#include "http/codec/organization_export.hpp"

#include "core/base/time_format.hpp"
#include "http/codec/accounts.hpp"
#include "http/codec/batch_job.hpp"
#include "http/codec/credits.hpp"
#include "http/codec/keys.hpp"
#include "http/codec/reader.hpp"
#include "http/codec/usage.hpp"
#include "http/codec/webhooks.hpp"

namespace mailassay::http::codec {

json organization_export(const use_cases::accounts::organization_export& e) {
  // Plain arrays: the list endpoints' {items} wrappers page, this does not.
  auto ledger = json::array();
  for (const auto& entry : e.ledger)
    ledger.push_back(credit_entry(entry));
  return {{"exportedAt", core::iso8601(e.exported_at)},
          {"organization", organization_view(e.organization)},
          {"members", members(e.members).at("items")},
          {"apiKeys", key_list(e.keys).at("items")},
          {"webhooks", endpoint_list(e.webhooks).at("items")},
          {"usage", organization_usage(e.usage)},
          {"ledger", std::move(ledger)},
          {"jobs", job_list(e.jobs, e.exported_at).at("items")}};
}

core::expected<std::string> erase_confirmation(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"password"}};
  // Long enough for any password sign-up accepts; checked, never stored.
  auto password = r.text("password", true, 1024);
  if (auto f = failure_of(r))
    return *f;
  return *password;
}

} // namespace mailassay::http::codec
