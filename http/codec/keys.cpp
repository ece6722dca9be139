#include "http/codec/keys.hpp"

#include "core/account/allowed_domain.hpp"
#include "core/base/ascii.hpp"
#include "core/base/time_format.hpp"
#include "http/codec/reader.hpp"

namespace mailassay::http::codec {

namespace acc = core::account;
namespace accounts = use_cases::accounts;

namespace {

void read_config(object_reader& parent, acc::key_config& cfg) {
  auto* obj = parent.object("config");
  if (!obj)
    return;
  object_reader r{
      *obj,
      {"smtp", "disposable", "roleAccount", "enrichment", "randomDetection"},
      "config."};
  cfg.smtp = r.flag("smtp").value_or(cfg.smtp);
  cfg.disposable = r.flag("disposable").value_or(cfg.disposable);
  cfg.role_account = r.flag("roleAccount").value_or(cfg.role_account);
  cfg.enrichment = r.flag("enrichment").value_or(cfg.enrichment);
  cfg.random_detection =
      r.flag("randomDetection").value_or(cfg.random_detection);
  for (auto& e : r.errors())
    parent.add(e);
}

std::optional<acc::rate_limits> read_limits(object_reader& parent) {
  auto* obj = parent.object("rateLimits");
  if (!obj)
    return std::nullopt;
  object_reader r{*obj, {"perMinute", "perHour", "perDay"}, "rateLimits."};
  acc::rate_limits l;
  constexpr std::int64_t max = 1'000'000'000;
  if (auto v = r.integer("perMinute", 1, max, true))
    l.per_minute = *v;
  if (auto v = r.integer("perHour", 1, max, true))
    l.per_hour = *v;
  if (auto v = r.integer("perDay", 1, max, true))
    l.per_day = *v;
  for (auto& e : r.errors())
    parent.add(e);
  return l;
}

std::optional<std::vector<std::string>> read_domains(object_reader& r) {
  auto domains = r.strings("allowedDomains", 100);
  if (!domains)
    return std::nullopt;
  bool ok = true;
  for (auto& d : *domains) {
    d = core::ascii_lower(d);
    if (!looks_like_domain(d)) {
      r.add("each value in allowedDomains must be a domain name (no scheme, "
            "port or path)");
      return std::nullopt;
    }
    // An entry admits its subdomains: `com` would admit every .com site.
    switch (acc::scope_of_allowed_domain(d)) {
      case acc::domain_scope::site: break;
      case acc::domain_scope::single_label:
        r.add("allowedDomains must not contain a single-label name (" + d +
              "): name the site's domain, e.g. example.com");
        ok = false;
        break;
      case acc::domain_scope::public_suffix:
        r.add("allowedDomains must not contain a public suffix (" + d +
              "): it would admit every site registered under it");
        ok = false;
        break;
    }
  }
  if (!ok)
    return std::nullopt;
  return domains;
}

} // namespace

core::expected<accounts::new_key_input> new_key(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body,
                  {"name", "allowedDomains", "config", "mode", "rateLimits"}};
  accounts::new_key_input in;
  in.name = r.label("name", true, 100).value_or("");
  in.allowed_domains = read_domains(r).value_or(std::vector<std::string>{});
  read_config(r, in.config);
  if (auto mode = r.text("mode", false, 8)) {
    if (*mode == "test")
      in.test = true;
    else if (*mode != "live")
      r.add("mode must be one of the following values: live, test");
  }
  if (r.has("rateLimits") && !(*body)["rateLimits"].is_null())
    in.limits = read_limits(r);
  if (auto f = failure_of(r))
    return *f;
  return in;
}

core::expected<accounts::key_patch> key_update(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"name", "allowedDomains", "config", "rateLimits"}};
  accounts::key_patch patch;
  auto& u = patch.fields;
  if (r.has("name"))
    u.name = r.label("name", true, 100);
  if (r.has("allowedDomains"))
    u.allowed_domains = read_domains(r);
  if (auto* obj = r.object("config")) {
    // A PATCH of config changes only the options it names.
    object_reader c{
        *obj,
        {"smtp", "disposable", "roleAccount", "enrichment", "randomDetection"},
        "config."};
    accounts::config_patch cp{c.flag("smtp"), c.flag("disposable"),
                              c.flag("roleAccount"), c.flag("enrichment"),
                              c.flag("randomDetection")};
    for (auto& e : c.errors())
      r.add(e);
    patch.config = cp;
  }
  if (r.has("rateLimits")) {
    if ((*body)["rateLimits"].is_null())
      u.limits = acc::rate_limits{};
    else
      u.limits = read_limits(r);
  }
  if (auto f = failure_of(r))
    return *f;
  return patch;
}

json key_config(const acc::key_config& c) {
  return {{"smtp", c.smtp},
          {"disposable", c.disposable},
          {"roleAccount", c.role_account},
          {"enrichment", c.enrichment},
          {"randomDetection", c.random_detection}};
}

json rate_limits(const acc::rate_limits& l) {
  return {{"perMinute", or_null(l.per_minute)},
          {"perHour", or_null(l.per_hour)},
          {"perDay", or_null(l.per_day)}};
}

const char* key_mode(const acc::api_key& k) {
  return acc::mode_of(k) == acc::key_mode::test ? "test" : "live";
}

json api_key(const acc::api_key& k) {
  return {{"id", k.id},
          {"name", k.name},
          {"status", acc::to_string(k.status)},
          {"prefix", k.prefix},
          {"mode", key_mode(k)},
          {"allowedDomains", k.allowed_domains},
          {"config", key_config(k.config)},
          {"rateLimits", rate_limits(k.limits)},
          {"organizationId", k.organization_id},
          {"createdAt", core::iso8601(k.created_at)},
          {"updatedAt", core::iso8601(k.updated_at)}};
}

json created_key(const accounts::created_key& k) {
  auto out = api_key(k.key);
  out["key"] = k.secret;
  return out;
}

json key_list(const std::vector<acc::api_key>& keys) {
  auto out = json::array();
  for (auto& k : keys)
    out.push_back(api_key(k));
  return json{{"items", out}};
}

json key_rate_limits(const acc::rate_limits& defaults,
                     const std::vector<acc::api_key>& keys) {
  auto items = json::array();
  for (auto& k : keys) {
    auto item = rate_limits(k.limits);
    item["id"] = k.id;
    item["name"] = k.name;
    items.push_back(item);
  }
  return json{{"defaults", rate_limits(defaults)}, {"keys", items}};
}

} // namespace mailassay::http::codec
