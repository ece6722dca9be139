#include "http/codec/accounts.hpp"

#include "core/base/time_format.hpp"
#include "http/codec/keys.hpp"
#include "http/codec/reader.hpp"

#include <algorithm>
#include <limits>

namespace mailassay::http::codec {

namespace acc = core::account;
namespace accounts = use_cases::accounts;

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

// The person of a sign-up or a new member: email, password, name.
template <class Input>
void read_person(object_reader& r, Input& in) {
  in.email = r.text("email", true, 254).value_or("");
  in.password = r.text("password", true, 256).value_or("");
  in.name = r.label("name", false, 200).value_or("");
}

// The checks of a new person's email and password, after every field was
// read (their messages come last).
template <class Input>
void check_person(object_reader& r, const Input& in) {
  if (!in.email.empty() && !looks_like_email(in.email))
    r.add("email must be an email");
  check_password(r, in.password);
}

} // namespace

core::expected<accounts::signup_input> signup(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"organizationName", "email", "password", "name"}};
  accounts::signup_input in;
  in.organization_name = r.label("organizationName", true, 200).value_or("");
  read_person(r, in);
  check_person(r, in);
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
  read_person(r, in);
  auto role = r.text("role", false, 16);
  check_person(r, in);
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

core::expected<std::optional<std::int64_t>>
organization_patch(const request_view& req) {
  auto body = parse_object(req);
  if (!body)
    return std::move(body).error_value();
  object_reader r{*body, {"batchRetentionSeconds"}};
  if (!r.has("batchRetentionSeconds"))
    r.add("batchRetentionSeconds should not be empty (an integer number of "
          "seconds, or null for the server's retention)");
  // Any integer: the bounds depend on the server's retention and are
  // checked with it (core/batch/retention.hpp), with their own message.
  auto seconds = r.integer("batchRetentionSeconds",
                           std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max(), true);
  if (auto f = failure_of(r))
    return *f;
  return *seconds;
}

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

json members(const std::vector<acc::member>& list) {
  auto out = json::array();
  for (auto& m : list)
    out.push_back(member(m));
  return json{{"items", out}};
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

void write_key_me(std::string& out, const acc::api_key& k,
                  const acc::organization& org) {
  json_writer w{out, true};
  // Keys in byte order at every level, as `dump()` writes them. Repetitive
  // by design: a direct writer spells out one field after another (the
  // cheapest authenticated answer); fields alike in shape are different
  // fields. tests/http_unit keeps it byte-identical to `me`.
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

json organization_view(const accounts::organization_view& v) {
  auto out = organization(v.org);
  out["members"] = v.members;
  out["credits"] = {{"balance", v.balance.balance},
                    {"consumed", v.balance.consumed}};
  out["batchRetentionSeconds"] = or_null(v.org.batch_retention_seconds);
  return out;
}

} // namespace mailassay::http::codec
