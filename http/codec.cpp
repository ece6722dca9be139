#include "http/codec.hpp"

#include "core/account/allowed_domain.hpp"
#include "core/base/ascii.hpp"
#include "core/base/time_format.hpp"
#include "http/json_body.hpp"
#include "http/text_cursor.hpp"
#include "http/text_pool.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

namespace mailassay::http::codec {

using core::errc;
using core::make_error;

namespace {

core::error bad_request(std::string message) {
  return make_error(errc::bad_request, std::move(message));
}

bool json_content_type(std::string_view ct) {
  // What nearly every client sends, without building a lower-case copy.
  if (core::ascii_iequals(ct, "application/json"))
    return true;
  std::string lower;
  for (char c : ct.substr(0, ct.find(';')))
    if (c != ' ')
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "application/json" ||
         (lower.rfind("application/", 0) == 0 && lower.size() > 5 &&
          lower.substr(lower.size() - 5) == "+json");
}

json optional_int(const std::optional<std::int64_t>& v) {
  return v ? json(*v) : json(nullptr);
}

} // namespace

std::string text_of(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

core::expected<json> parse_object(const request_view& req) {
  auto ct = req.header("Content-Type");
  if (!req.body.empty() && ct && !json_content_type(*ct))
    return bad_request("Content-Type must be application/json");
  if (req.body.empty())
    return bad_request("Request body must be a JSON object");
  auto parsed = parse_json_body(req.body);
  if (!parsed)
    return std::move(parsed).error_value();
  if (!parsed->is_object())
    return bad_request("Request body must be a JSON object");
  return std::move(*parsed);
}

object_reader::object_reader(const json& obj,
                             std::initializer_list<const char*> allowed,
                             std::string prefix)
    : obj_(obj), prefix_(std::move(prefix)) {
  for (auto& item : obj_.items()) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture
    // one in a lambda.
    const auto& key = item.key();
    bool known = std::any_of(allowed.begin(), allowed.end(),
                             [&](const char* a) { return key == a; });
    if (!known)
      errors_.push_back("property " + prefix_ + key + " should not exist");
  }
}

bool object_reader::has(const char* name) const {
  return obj_.contains(name);
}

std::optional<std::string> object_reader::text(const char* name, bool required,
                                               std::size_t max) {
  auto i = obj_.find(name);
  if (i == obj_.end() || i->is_null()) {
    if (required)
      errors_.push_back(full(name) + " should not be empty");
    return std::nullopt;
  }
  if (!i->is_string()) {
    errors_.push_back(full(name) + " must be a string");
    return std::nullopt;
  }
  auto value = i->get<std::string>();
  if (required && value.empty()) {
    errors_.push_back(full(name) + " should not be empty");
    return std::nullopt;
  }
  if (value.size() > max) {
    errors_.push_back(full(name) + " must be shorter than or equal to " +
                      std::to_string(max) + " octets");
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> object_reader::label(const char* name, bool required,
                                                std::size_t max_chars) {
  // Counted in characters: a person's name is measured as they see it
  // (the body's own limit bounds the bytes).
  auto value = text(name, required, SIZE_MAX);
  if (!value)
    return std::nullopt;
  bool blank = true;
  std::size_t chars = 0;
  for (unsigned char c : *value) {
    if (c < 0x20 || c == 0x7f) {
      errors_.push_back(full(name) + " must not contain control characters");
      return std::nullopt;
    }
    blank = blank && c == ' ';
    chars += (c & 0xC0) != 0x80;
  }
  if (blank && (required || !value->empty())) {
    errors_.push_back(full(name) + " must not be blank");
    return std::nullopt;
  }
  if (chars > max_chars) {
    errors_.push_back(full(name) + " must be shorter than or equal to " +
                      std::to_string(max_chars) + " characters");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> object_reader::flag(const char* name) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return std::nullopt;
  if (!i->is_boolean()) {
    errors_.push_back(full(name) + " must be a boolean value");
    return std::nullopt;
  }
  return i->get<bool>();
}

std::optional<std::optional<std::int64_t>>
object_reader::integer(const char* name, std::int64_t min, std::int64_t max,
                       bool nullable) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return std::nullopt;
  if (i->is_null() && nullable)
    return std::optional<std::int64_t>{};
  if (!i->is_number_integer()) {
    errors_.push_back(full(name) + " must be an integer number" +
                      (nullable ? std::string{" or null"} : ""));
    return std::nullopt;
  }
  auto v = i->get<std::int64_t>();
  if (v < min || v > max) {
    errors_.push_back(full(name) + " must be between " + std::to_string(min) +
                      " and " + std::to_string(max));
    return std::nullopt;
  }
  return std::optional<std::int64_t>{v};
}

const json* object_reader::object(const char* name) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return nullptr;
  if (!i->is_object()) {
    errors_.push_back(full(name) + " must be an object");
    return nullptr;
  }
  return &*i;
}

std::optional<std::vector<std::string>>
object_reader::strings(const char* name, std::size_t max_items) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return std::nullopt;
  if (!i->is_array()) {
    errors_.push_back(full(name) + " must be an array");
    return std::nullopt;
  }
  if (i->size() > max_items) {
    errors_.push_back(full(name) + " must contain no more than " +
                      std::to_string(max_items) + " elements");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (auto& item : *i) {
    if (!item.is_string()) {
      errors_.push_back("each value in " + full(name) + " must be a string");
      return std::nullopt;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<core::error> failure_of(object_reader& r) {
  if (r.errors().empty())
    return std::nullopt;
  core::error e = make_error(errc::validation_failed, "Validation failed");
  e.details = std::move(r.errors());
  return e;
}

bool looks_like_email(const std::string& s) {
  auto at = s.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 >= s.size() ||
      s.size() > 254)
    return false;
  auto domain = s.substr(at + 1);
  if (domain.find('.') == std::string::npos || domain.front() == '.' ||
      domain.back() == '.')
    return false;
  return std::none_of(s.begin(), s.end(),
                      [](unsigned char c) { return c <= ' ' || c == 0x7F; });
}

bool looks_like_domain(const std::string& s) {
  if (s.empty() || s.size() > 253 || s.front() == '.' || s.back() == '.' ||
      s.front() == '-')
    return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.';
  });
}

// -- decoders ---------------------------------------------------------------

namespace {

// At least 8 octets, and not only blanks (eight spaces pass a length rule
// and nothing else); the check of a new password, never of a login's.
void check_password(object_reader& r, const std::string& password) {
  if (password.empty())
    return;
  if (password.size() < 8)
    return r.add("password must be longer than or equal to 8 characters");
  bool blank = std::all_of(password.begin(), password.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
  if (blank)
    r.add("password must not be blank");
}

} // namespace

core::expected<accounts::signup_input> signup(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"organizationName", "email", "password", "name"}};
  accounts::signup_input in;
  in.organization_name = r.label("organizationName", true, 200).value_or("");
  in.email = r.text("email", true, 254).value_or("");
  in.password = r.text("password", true, 256).value_or("");
  in.name = r.label("name", false, 200).value_or("");
  if (!in.email.empty() && !looks_like_email(in.email))
    r.add("email must be an email");
  check_password(r, in.password);
  if (auto f = failure_of(r))
    return *f;
  return in;
}

core::expected<std::pair<std::string, std::string>>
login(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"email", "password"}};
  auto email = r.text("email", true, 254);
  auto password = r.text("password", true, 256);
  if (auto f = failure_of(r))
    return *f;
  return std::pair{*email, *password};
}

core::expected<std::string> refresh_token(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"refreshToken"}};
  auto token = r.text("refreshToken", true, 512);
  if (auto f = failure_of(r))
    return *f;
  return *token;
}

core::expected<accounts::new_member_input> new_member(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"email", "password", "name", "role"}};
  accounts::new_member_input in;
  in.email = r.text("email", true, 254).value_or("");
  in.password = r.text("password", true, 256).value_or("");
  in.name = r.label("name", false, 200).value_or("");
  auto role = r.text("role", false, 16);
  if (!in.email.empty() && !looks_like_email(in.email))
    r.add("email must be an email");
  check_password(r, in.password);
  if (role) {
    if (auto parsed = acc::parse_role(*role))
      in.role = *parsed;
    else
      r.add("role must be one of the following values: owner, admin, member");
  }
  if (auto f = failure_of(r))
    return *f;
  return in;
}

core::expected<acc::role> role_change(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"role"}};
  auto role = r.text("role", true, 16);
  std::optional<acc::role> parsed;
  if (role && !(parsed = acc::parse_role(*role)))
    r.add("role must be one of the following values: owner, admin, member");
  if (auto f = failure_of(r))
    return *f;
  return *parsed;
}

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

namespace {

bool json_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

// The common body, `{"email":"..."}` (JSON whitespace allowed between
// tokens): returns the address when the body is exactly that with a string
// of printable ASCII without escapes, which nlohmann would parse to the same
// one-field object. Anything else (escapes, non-ASCII, other fields, other
// types, malformed JSON) returns nullopt and takes the full parser, whose
// errors are the reference.
std::optional<std::string_view> one_email_field(std::string_view body) {
  std::size_t i = 0;
  auto skip = [&] {
    while (i < body.size() && json_space(body[i]))
      ++i;
  };
  auto literal = [&](std::string_view token) {
    if (body.compare(i, token.size(), token) != 0)
      return false;
    i += token.size();
    return true;
  };
  skip();
  if (!literal("{"))
    return std::nullopt;
  skip();
  if (!literal("\"email\""))
    return std::nullopt;
  skip();
  if (!literal(":"))
    return std::nullopt;
  skip();
  if (!literal("\""))
    return std::nullopt;
  auto start = i;
  while (i < body.size()) {
    auto ch = static_cast<unsigned char>(body[i]);
    if (ch == '"')
      break;
    if (ch < 0x20 || ch == '\\' || ch >= 0x80)
      return std::nullopt;
    ++i;
  }
  if (i == body.size())
    return std::nullopt;
  auto email = body.substr(start, i - start);
  ++i;
  skip();
  if (!literal("}"))
    return std::nullopt;
  skip();
  if (i != body.size())
    return std::nullopt;
  return email;
}

core::expected<validation_input>
read_validation(const request_view& req,
                std::initializer_list<const char*> allowed) {
  // Most requests: one well-formed field, no error to report. Everything
  // else goes through nlohmann and the object reader below.
  if (auto email = one_email_field(req.body);
      email && !email->empty() && email->size() <= 254) {
    auto ct = req.header("Content-Type");
    if (!ct || json_content_type(*ct)) {
      validation_input in;
      in.email = std::string{*email};
      return in;
    }
  }
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, allowed};
  validation_input in;
  auto i = body->find("email");
  if (i == body->end() || i->is_null())
    r.add("email should not be empty");
  else if (!i->is_string())
    r.add("email must be a string");
  else if (i->get_ref<const std::string&>().empty())
    r.add("email should not be empty");
  else if (i->get_ref<const std::string&>().size() > 254)
    r.add("email must be shorter than or equal to 254 octets");
  else
    in.email = i->get<std::string>();
  in.smtp = r.flag("smtp").value_or(false);
  if (auto t = r.integer("timeout", 1000, 30000, false))
    in.timeout_ms = **t;
  if (auto f = failure_of(r))
    return *f;
  return in;
}

} // namespace

core::expected<validation_input> validation(const request_view& req) {
  return read_validation(req, {"email", "smtp", "timeout"});
}

core::expected<validation_input> widget_validation(const request_view& req) {
  return read_validation(req, {"email"});
}

// -- encoders ---------------------------------------------------------------

json user(const acc::user& u) {
  return {{"id", u.id},
          {"email", u.email},
          {"name", u.name},
          {"createdAt", core::iso8601(u.created_at)}};
}

json organization(const acc::organization& o) {
  return {{"id", o.id},
          {"name", o.name},
          {"createdAt", core::iso8601(o.created_at)}};
}

json member(const acc::member& m) {
  auto out = user(m.person);
  out["role"] = acc::to_string(m.member_role);
  out["organizationId"] = m.organization_id;
  return out;
}

json key_config(const acc::key_config& c) {
  return {{"smtp", c.smtp},
          {"disposable", c.disposable},
          {"roleAccount", c.role_account},
          {"enrichment", c.enrichment},
          {"randomDetection", c.random_detection}};
}

json rate_limits(const acc::rate_limits& l) {
  return {{"perMinute", optional_int(l.per_minute)},
          {"perHour", optional_int(l.per_hour)},
          {"perDay", optional_int(l.per_day)}};
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

json token_pair(const accounts::session& s) {
  return {{"accessToken", s.access_token},
          {"refreshToken", s.refresh_token},
          {"expiresIn", s.expires_in},
          {"tokenType", "Bearer"}};
}

json session(const accounts::session& s) {
  auto out = token_pair(s);
  out["user"] = user(s.person);
  out["user"]["role"] = acc::to_string(s.role);
  out["organization"] = organization(s.org);
  out["role"] = acc::to_string(s.role);
  return out;
}

json me(const accounts::me_view& m) {
  json out{{"organization", organization(m.org)}};
  if (m.who.type == accounts::principal::kind::user) {
    out["type"] = "user";
    out["role"] = acc::to_string(m.who.role);
    if (m.person)
      out["user"] = user(*m.person);
  } else {
    out["type"] = "api_key";
    out["apiKey"] = api_key(*m.who.key);
  }
  return out;
}

json organization_view(const accounts::organization_view& v) {
  auto out = organization(v.org);
  out["members"] = v.members;
  out["credits"] = {{"balance", v.balance.balance},
                    {"consumed", v.balance.consumed}};
  return out;
}

json balance(const acc::credit_balance& b) {
  return {{"organizationId", b.organization_id},
          {"balance", b.balance},
          {"consumed", b.consumed},
          {"updatedAt", core::iso8601(b.updated_at)}};
}

json credit_entry(const acc::credit_entry& e) {
  return {{"id", e.id},
          {"delta", e.delta},
          {"kind", e.kind},
          {"reference", e.reference},
          {"balanceAfter", e.balance_after},
          {"createdAt", core::iso8601(e.created_at)}};
}

} // namespace mailassay::http::codec

namespace mailassay::http::codec {

namespace {

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

} // namespace

json validation_result(const actors::validation::result& r) {
  const auto& a = r.address;
  const auto& c = r.checks;
  json out;
  out["email"] = a.input;
  out["normalized"] = a.valid ? json(a.normalized) : json(nullptr);
  out["status"] = core::validation::to_string(r.verdict.state);
  out["reason"] = r.verdict.reason;
  out["score"] = r.verdict.score;
  out["syntax"] = {
      {"valid", a.valid},
      {"localPart", a.local_part},
      {"domain", a.domain},
      {"asciiDomain", a.ascii_domain},
      {"ipLiteral", a.ip_literal},
      {"smtputf8", a.needs_smtputf8},
      {"detail", a.detail.empty() ? json(nullptr) : json(a.detail)}};
  if (r.route) {
    using core::dns::route_kind;
    auto mx = json::array();
    for (auto& h : r.route->hosts)
      mx.push_back({{"host", h.host}, {"priority", h.priority}});
    auto kind = r.route->kind;
    out["dns"] = {{"hasMx", kind == route_kind::mx},
                  {"mx", mx},
                  {"implicitMx", kind == route_kind::implicit_mx},
                  {"nullMx", kind == route_kind::null_mx},
                  {"result", core::dns::to_string(kind)}};
    if (kind == route_kind::dns_error)
      out["dns"]["error"] = core::dns::to_string(r.route->cause);
  } else {
    out["dns"] = nullptr;
  }
  const auto& s = r.smtp;
  out["smtp"] = {
      {"checked", s.checked},
      {"deliverable", or_null(s.deliverable)},
      {"catchAll", or_null(s.catch_all)},
      {"greylisted", s.greylisted},
      {"fullInbox", s.full_inbox},
      {"disabled", s.disabled},
      {"timedOut", s.timed_out},
      {"code", r.smtp_reply.code ? json(r.smtp_reply.code) : json(nullptr)},
      {"enhancedCode", r.smtp_reply.enhanced.empty()
                           ? json(nullptr)
                           : json(r.smtp_reply.enhanced)},
      {"message", r.smtp_reply.message.empty() ? json(nullptr)
                                               : json(r.smtp_reply.message)},
      {"host",
       r.smtp_reply.host.empty() ? json(nullptr) : json(r.smtp_reply.host)},
      {"attempts", r.smtp_reply.attempts}};
  out["disposable"] = {{"isDisposable", or_null(c.disposable)}};
  out["roleAccount"] = {
      {"isRoleAccount", or_null(c.role_account)},
      {"role", c.role_account.value_or(false) ? json(c.role) : json(nullptr)}};
  out["freeProvider"] = {{"isFree", c.free_provider}};
  if (c.random)
    out["random"] = {{"isRandom", c.random->is_random},
                     {"score", std::round(c.random->score * 1000) / 1000}};
  else
    out["random"] = {{"isRandom", nullptr}, {"score", nullptr}};
  out["typo"] = {{"hasTypo", c.suggested_domain.has_value()},
                 {"suggestion", or_null(c.suggested_domain)}};
  auto suggestions = json::array();
  if (c.suggested_domain)
    suggestions.push_back(a.local_part + "@" + *c.suggested_domain);
  out["suggestions"] = suggestions;
  if (r.enrichment)
    out["enrichment"] = {{"firstName", or_null(c.first_name)}};
  auto signals = json::array();
  for (auto& sig : r.verdict.signals)
    signals.push_back({{"signal", sig.signal}, {"points", sig.points}});
  out["signals"] = signals;
  out["creditsUsed"] = r.credits_used;
  out["durationMs"] = std::round(r.duration_ms * 1000) / 1000;
  // Only in a test key's answers: live answers keep their bytes.
  if (r.sandbox)
    out["sandbox"] = true;
  return out;
}

} // namespace mailassay::http::codec

namespace mailassay::http::codec {

namespace {

// Writes JSON text the way nlohmann's `dump()` does (no indentation,
// ensure_ascii off, strict UTF-8); the caller writes object keys in sorted
// order, as nlohmann's `std::map` objects do.
class json_writer : public text_cursor {
public:
  // Most results fit in the first room made. With `scrub`, bytes that are
  // not UTF-8 are written as U+FFFD, as text_of() writes them; without, they
  // throw nlohmann's type_error, as dump() does.
  explicit json_writer(std::string& out, bool scrub = false)
      : text_cursor(out, 1536), scrub_(scrub) {}

  void text(std::string_view s) {
    if (!written_as_is(s)) {
      // Escapes and UTF-8 exactly as nlohmann does: rare on this path.
      raw(scrub_ ? text_of(json(std::string{s})) : json(std::string{s}).dump());
      return;
    }
    room(s.size() + 2);
    *at_++ = '"';
    std::memcpy(at_, s.data(), s.size());
    at_ += s.size();
    *at_++ = '"';
  }

  void flag(bool b) {
    if (b)
      raw("true");
    else
      raw("false");
  }

  void null() { raw("null"); }

  /// Writes `items` as an array of objects, `fields(item)` writing each
  /// object's members between its braces.
  template <class Items, class Fields>
  void objects(const Items& items, Fields fields) {
    raw("[");
    bool first = true;
    for (const auto& item : items) {
      raw(first ? "{" : ",{");
      first = false;
      fields(item);
      raw("}");
    }
    raw("]");
  }

  void number(double v) {
    if (!std::isfinite(v))
      return null();
    room(64);
    at_ = nlohmann::detail::to_chars(at_, at_ + 64, v);
  }

  /// Writes `std::round(v * 1000) / 1000` as number() would. Such a value
  /// below 10^12 prints as its thousandths with trailing zeros dropped (the
  /// shortest text that reads back as the same double, as nlohmann writes
  /// it); without nlohmann's Grisu, a fifth of the instructions.
  void thousandths(double v) {
    double x = std::round(v * 1000);
    if (!(x >= 0 && x < 1e15) || (x == 0 && std::signbit(x)))
      return number(x / 1000);
    auto k = static_cast<std::uint64_t>(x);
    room(24);
    at_ = std::to_chars(at_, end_, k / 1000).ptr;
    *at_++ = '.';
    auto frac = static_cast<unsigned>(k % 1000);
    char digits[3] = {static_cast<char>('0' + frac / 100),
                      static_cast<char>('0' + frac / 10 % 10),
                      static_cast<char>('0' + frac % 10)};
    std::size_t n = 3;
    while (n > 1 && digits[n - 1] == '0')
      --n;
    std::memcpy(at_, digits, n);
    at_ += n;
  }

  void text_or_null(const std::string& s) {
    if (s.empty())
      null();
    else
      text(s);
  }

  void text_or_null(const std::optional<std::string>& s) {
    if (s)
      text(*s);
    else
      null();
  }

  void flag_or_null(const std::optional<bool>& b) {
    if (b)
      flag(*b);
    else
      null();
  }

  void integer_or_null(const std::optional<std::int64_t>& v) {
    if (v)
      integer(*v);
    else
      null();
  }

private:
  bool scrub_;
};

} // namespace

void write_validation_result(std::string& out,
                             const actors::validation::result& r) {
  using core::dns::route_kind;
  const auto& a = r.address;
  const auto& c = r.checks;
  const auto& s = r.smtp;
  const auto& reply = r.smtp_reply;
  json_writer w{out};
  // Keys in byte order at every level, as `dump()` writes them.
  w.raw("{\"creditsUsed\":");
  w.integer(r.credits_used);
  w.raw(",\"disposable\":");
  w.raw("{\"isDisposable\":");
  w.flag_or_null(c.disposable);
  w.raw("},\"dns\":");
  if (r.route) {
    auto kind = r.route->kind;
    w.raw("{");
    if (kind == route_kind::dns_error) {
      w.raw("\"error\":");
      w.text(core::dns::to_string(r.route->cause));
      w.raw(",");
    }
    w.raw("\"hasMx\":");
    w.flag(kind == route_kind::mx);
    w.raw(",\"implicitMx\":");
    w.flag(kind == route_kind::implicit_mx);
    w.raw(",\"mx\":");
    w.objects(r.route->hosts, [&](const auto& h) {
      w.raw("\"host\":");
      w.text(h.host);
      w.raw(",\"priority\":");
      w.integer(h.priority);
    });
    w.raw(",\"nullMx\":");
    w.flag(kind == route_kind::null_mx);
    w.raw(",\"result\":");
    w.text(core::dns::to_string(kind));
    w.raw("}");
  } else {
    w.null();
  }
  w.raw(",\"durationMs\":");
  w.thousandths(r.duration_ms);
  w.raw(",\"email\":");
  w.text(a.input);
  w.raw(",");
  if (r.enrichment) {
    w.raw("\"enrichment\":");
    w.raw("{\"firstName\":");
    w.text_or_null(c.first_name);
    w.raw("},");
  }
  w.raw("\"freeProvider\":");
  w.raw("{\"isFree\":");
  w.flag(c.free_provider);
  w.raw("},\"normalized\":");
  if (a.valid)
    w.text(a.normalized);
  else
    w.null();
  w.raw(",\"random\":");
  w.raw("{\"isRandom\":");
  if (c.random)
    w.flag(c.random->is_random);
  else
    w.null();
  w.raw(",\"score\":");
  if (c.random)
    w.thousandths(c.random->score);
  else
    w.null();
  w.raw("},\"reason\":");
  w.text(r.verdict.reason);
  w.raw(",\"roleAccount\":");
  w.raw("{\"isRoleAccount\":");
  w.flag_or_null(c.role_account);
  w.raw(",\"role\":");
  if (c.role_account.value_or(false))
    w.text(c.role);
  else
    w.null();
  w.raw("},");
  if (r.sandbox)
    w.raw("\"sandbox\":true,");
  w.raw("\"score\":");
  w.integer(r.verdict.score);
  w.raw(",\"signals\":");
  w.objects(r.verdict.signals, [&](const auto& sig) {
    w.raw("\"points\":");
    w.integer(sig.points);
    w.raw(",\"signal\":");
    w.text(sig.signal);
  });
  w.raw(",\"smtp\":");
  w.raw("{\"attempts\":");
  w.integer(reply.attempts);
  w.raw(",\"catchAll\":");
  w.flag_or_null(s.catch_all);
  w.raw(",\"checked\":");
  w.flag(s.checked);
  w.raw(",\"code\":");
  if (reply.code)
    w.integer(reply.code);
  else
    w.null();
  w.raw(",\"deliverable\":");
  w.flag_or_null(s.deliverable);
  w.raw(",\"disabled\":");
  w.flag(s.disabled);
  w.raw(",\"enhancedCode\":");
  w.text_or_null(reply.enhanced);
  w.raw(",\"fullInbox\":");
  w.flag(s.full_inbox);
  w.raw(",\"greylisted\":");
  w.flag(s.greylisted);
  w.raw(",\"host\":");
  w.text_or_null(reply.host);
  w.raw(",\"message\":");
  w.text_or_null(reply.message);
  w.raw(",\"timedOut\":");
  w.flag(s.timed_out);
  w.raw("},\"status\":");
  w.text(core::validation::to_string(r.verdict.state));
  w.raw(",\"suggestions\":");
  w.raw("[");
  if (c.suggested_domain) {
    // One string, escaped as a whole like the reference's concatenation.
    std::string suggestion = a.local_part;
    suggestion += '@';
    suggestion += *c.suggested_domain;
    w.text(suggestion);
  }
  w.raw("],\"syntax\":");
  w.raw("{\"asciiDomain\":");
  w.text(a.ascii_domain);
  w.raw(",\"detail\":");
  w.text_or_null(a.detail);
  w.raw(",\"domain\":");
  w.text(a.domain);
  w.raw(",\"ipLiteral\":");
  w.flag(a.ip_literal);
  w.raw(",\"localPart\":");
  w.text(a.local_part);
  w.raw(",\"smtputf8\":");
  w.flag(a.needs_smtputf8);
  w.raw(",\"valid\":");
  w.flag(a.valid);
  w.raw("},\"typo\":");
  w.raw("{\"hasTypo\":");
  w.flag(c.suggested_domain.has_value());
  w.raw(",\"suggestion\":");
  w.text_or_null(c.suggested_domain);
  w.raw("}}");
}

void write_key_me(std::string& out, const acc::api_key& k,
                  const acc::organization& org) {
  json_writer w{out, true};
  // Keys in byte order at every level, as `dump()` writes them.
  w.raw("{\"apiKey\":{\"allowedDomains\":[");
  for (std::size_t i = 0; i < k.allowed_domains.size(); ++i) {
    if (i)
      w.raw(",");
    w.text(k.allowed_domains[i]);
  }
  w.raw("],\"config\":{\"disposable\":");
  w.flag(k.config.disposable);
  w.raw(",\"enrichment\":");
  w.flag(k.config.enrichment);
  w.raw(",\"randomDetection\":");
  w.flag(k.config.random_detection);
  w.raw(",\"roleAccount\":");
  w.flag(k.config.role_account);
  w.raw(",\"smtp\":");
  w.flag(k.config.smtp);
  w.raw("},\"createdAt\":");
  w.text(core::iso8601(k.created_at));
  w.raw(",\"id\":");
  w.text(k.id);
  w.raw(",\"mode\":");
  w.text(key_mode(k));
  w.raw(",\"name\":");
  w.text(k.name);
  w.raw(",\"organizationId\":");
  w.text(k.organization_id);
  w.raw(",\"prefix\":");
  w.text(k.prefix);
  w.raw(",\"rateLimits\":{\"perDay\":");
  w.integer_or_null(k.limits.per_day);
  w.raw(",\"perHour\":");
  w.integer_or_null(k.limits.per_hour);
  w.raw(",\"perMinute\":");
  w.integer_or_null(k.limits.per_minute);
  w.raw("},\"status\":");
  w.text(acc::to_string(k.status));
  w.raw(",\"updatedAt\":");
  w.text(core::iso8601(k.updated_at));
  w.raw("},\"organization\":{\"createdAt\":");
  w.text(core::iso8601(org.created_at));
  w.raw(",\"id\":");
  w.text(org.id);
  w.raw(",\"name\":");
  w.text(org.name);
  w.raw("},\"type\":\"api_key\"}");
}

std::string validation_result_text(const actors::validation::result& r) {
  auto out = text_pool::take();
  out.reserve(1280);
  write_validation_result(out, r);
  return out;
}

} // namespace mailassay::http::codec
