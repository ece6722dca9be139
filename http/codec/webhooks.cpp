#include "http/codec/webhooks.hpp"

#include "core/base/time_format.hpp"
#include "core/webhooks/target_url.hpp"
#include "http/codec/batch_job.hpp"
#include "http/codec/keys.hpp"
#include "http/codec/reader.hpp"

namespace mailassay::http::codec {

namespace {

namespace wh = core::webhooks;

// The events list of a body: names checked by core (422 per problem).
std::optional<std::vector<wh::event_type>> read_events(object_reader& r,
                                                       bool required) {
  if (!r.has("events")) {
    if (required)
      r.add("events should not be empty");
    return std::nullopt;
  }
  auto names = r.strings("events", 16);
  if (!names)
    return std::nullopt;
  auto events = wh::parse_subscription(*names);
  if (!events) {
    for (auto& m : events.error_value().details)
      r.add(m);
    return std::nullopt;
  }
  return *events;
}

json events_json(const std::vector<wh::event_type>& events) {
  auto out = json::array();
  for (auto e : events)
    out.push_back(std::string{wh::to_string(e)});
  return out;
}

json time_ms(std::int64_t ms) {
  return ms > 0 ? json(core::iso8601(ms / 1000)) : json(nullptr);
}

std::string export_url(const std::string& public_url,
                       const std::string& job_id) {
  auto base = public_url;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  return base + "/v2/batch/" + job_id + "/results?format=csv";
}

} // namespace

core::expected<use_cases::webhooks::new_endpoint_input>
new_endpoint(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body,
                  {"url", "events", "description", "creditsLowThreshold"}};
  use_cases::webhooks::new_endpoint_input in;
  in.url = r.text("url", true, wh::max_url_bytes).value_or("");
  if (auto events = read_events(r, true))
    in.events = std::move(*events);
  if (r.has("description") && !(*body)["description"].is_null())
    in.description = r.label("description", false, 500).value_or("");
  if (auto t = r.integer("creditsLowThreshold", 0, 1LL << 40, false))
    in.credits_low_threshold = *t;
  if (auto f = failure_of(r))
    return *f;
  return in;
}

core::expected<use_cases::webhooks::endpoint_patch>
endpoint_update(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{
      *body, {"url", "events", "description", "status", "creditsLowThreshold"}};
  use_cases::webhooks::endpoint_patch p;
  if (r.has("url"))
    p.url = r.text("url", true, wh::max_url_bytes);
  p.events = read_events(r, false);
  if (r.has("description"))
    p.description = (*body)["description"].is_null()
                        ? std::optional<std::string>{""}
                        : r.label("description", false, 500);
  if (r.has("status")) {
    auto s = r.text("status", true, 16);
    if (s) {
      p.status = wh::parse_endpoint_status(*s);
      if (!p.status)
        r.add("status must be one of the following values: active, "
              "disabled");
    }
  }
  if (auto t = r.integer("creditsLowThreshold", 0, 1LL << 40, false))
    p.credits_low_threshold = *t;
  if (auto f = failure_of(r))
    return *f;
  return p;
}

json endpoint(const wh::endpoint& w) {
  return {{"id", w.id},
          {"organizationId", w.organization_id},
          {"url", w.url},
          {"description", w.description},
          {"events", events_json(w.events)},
          {"status", wh::to_string(w.status)},
          {"creditsLowThreshold", w.credits_low_threshold},
          {"createdAt", core::iso8601(w.created_at)},
          {"updatedAt", core::iso8601(w.updated_at)}};
}

json endpoint_with_secret(const use_cases::webhooks::endpoint_with_secret& e) {
  auto out = endpoint(e.endpoint);
  out["secret"] = e.secret;
  return out;
}

json delivery(const wh::delivery& d) {
  auto attempts = json::array();
  for (const auto& a : d.log)
    attempts.push_back(
        {{"number", a.number},
         {"at", core::iso8601(a.at_ms / 1000)},
         {"durationMs", a.duration_ms},
         {"statusCode",
          a.status_code > 0 ? json(a.status_code) : json(nullptr)},
         {"error", a.error.empty() ? json(nullptr) : json(a.error)}});
  bool pending = d.status == wh::delivery_status::pending;
  return {
      {"id", d.id},
      {"webhookId", d.webhook_id},
      {"event", wh::to_string(d.event)},
      {"status", wh::to_string(d.status)},
      {"createdAt", core::iso8601(d.created_ms / 1000)},
      {"attemptCount", d.attempts},
      {"nextAttemptAt",
       pending ? json(core::iso8601(d.next_attempt_ms / 1000)) : json(nullptr)},
      {"lastStatusCode",
       d.last_status_code > 0 ? json(d.last_status_code) : json(nullptr)},
      {"lastError", d.last_error.empty() ? json(nullptr) : json(d.last_error)},
      {"deliveredAt", time_ms(d.delivered_ms)},
      {"attempts", attempts}};
}

json endpoint_list(const std::vector<wh::endpoint>& list) {
  auto items = json::array();
  for (const auto& w : list)
    items.push_back(endpoint(w));
  return json{{"items", items}};
}

json delivery_list(const std::vector<wh::delivery>& list) {
  auto items = json::array();
  for (const auto& d : list)
    items.push_back(delivery(d));
  return json{{"items", items}};
}

std::string event_body(const wh::delivery& d,
                       const use_cases::webhooks::event_subject& subject,
                       const std::string& public_url, std::int64_t now) {
  json data = json::object();
  switch (d.event) {
    case wh::event_type::batch_completed:
    case wh::event_type::batch_failed:
    case wh::event_type::batch_cancelled:
      data["job"] = subject.job ? job_record(*subject.job, now)
                                : json{{"id", d.subject_id}};
      data["exportUrl"] = export_url(public_url, d.subject_id);
      break;
    case wh::event_type::key_revoked:
      data["key"] =
          subject.key ? api_key(*subject.key) : json{{"id", d.subject_id}};
      data["revokedAt"] = core::iso8601(d.created_ms / 1000);
      break;
    case wh::event_type::credits_low:
      data["balance"] = d.balance;
      data["threshold"] = d.threshold;
      break;
    case wh::event_type::ping:
      data["webhookId"] = d.subject_id;
      data["message"] = "This is a test delivery.";
      break;
  }
  json body = {{"id", d.id},
               {"type", wh::to_string(d.event)},
               {"createdAt", core::iso8601(d.created_ms / 1000)},
               {"organizationId", d.organization_id},
               {"data", data}};
  return text_of(body);
}

} // namespace mailassay::http::codec
