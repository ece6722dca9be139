#include "http/codec/audit.hpp"

#include "core/base/time_format.hpp"
#include "http/codec/reader.hpp"

namespace mailassay::http::codec {

namespace acc = core::account;

core::expected<audit_query> audit_log_query(const request_view& req) {
  audit_query q;
  std::vector<std::string> errors;
  auto limit = integer_param(req, "limit", 50, 1, 200);
  auto before = integer_param(req, "before", 0, 0, INT64_MAX);
  for (auto* p : {&limit, &before})
    if (!*p)
      errors.push_back(p->error_value().details.front());
  if (auto action = req.query_param("action")) {
    if (acc::is_audit_action(*action)) {
      q.action = *action;
    } else {
      std::string known;
      for (auto a : acc::audit_actions())
        known += (known.empty() ? "" : ", ") + std::string{a};
      errors.push_back("action must be one of the following values: " + known);
    }
  }
  if (!errors.empty()) {
    auto e = core::make_error(core::errc::validation_failed, "");
    e.details = std::move(errors);
    return e;
  }
  q.limit = *limit;
  q.before = *before;
  return q;
}

json audit_entry(const acc::audit_entry& e) {
  // Written by the service itself as JSON; anything else shows as {}.
  auto details = json::parse(e.details, nullptr, false);
  if (details.is_discarded() || !details.is_object())
    details = json::object();
  json actor_id = e.actor_id.empty() ? json(nullptr) : json(e.actor_id);
  return {{"id", e.id},
          {"at", core::iso8601(e.at)},
          {"action", e.action},
          {"actor", {{"type", acc::to_string(e.actor_type)}, {"id", actor_id}}},
          {"target", e.target},
          {"ip", e.ip.empty() ? json(nullptr) : json(e.ip)},
          {"details", std::move(details)},
          {"occurrences", e.occurrences}};
}

json audit_page(const std::vector<acc::audit_entry>& rows, std::int64_t limit) {
  auto items = json::array();
  for (const auto& r : rows)
    items.push_back(audit_entry(r));
  json next = nullptr;
  if (static_cast<std::int64_t>(rows.size()) == limit && !rows.empty())
    next = rows.back().id;
  return json{{"items", items}, {"nextBefore", next}};
}

} // namespace mailassay::http::codec
