#include "http/codec/validation.hpp"

#include "http/codec/json_text.hpp"
#include "http/codec/reader.hpp"
#include "http/text_pool.hpp"

#include <string_view>

namespace mailassay::http::codec {

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
  // Byte by byte: the tokens are a few bytes, shorter than a call.
  auto literal = [&](std::string_view token) {
    if (body.size() - i < token.size())
      return false;
    for (std::size_t k = 0; k < token.size(); ++k)
      if (body[i + k] != token[k])
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

namespace {

// Whether the SMTP members of a result say anything: false when each is at
// its default, as for every answer without a probe.
bool probed(const core::validation::smtp_facts& s,
            const actors::validation::smtp_detail& reply) {
  return s.checked || s.deliverable || s.catch_all || s.greylisted ||
         s.full_inbox || s.disabled || s.timed_out || s.failure ||
         reply.attempts || reply.code || !reply.host.empty() ||
         !reply.enhanced.empty() || !reply.message.empty();
}

} // namespace

void write_validation_result(std::string& out,
                             const actors::validation::result& r,
                             bad_utf8 policy) {
  using core::dns::route_kind;
  const auto& a = r.address;
  const auto& c = r.checks;
  const auto& s = r.smtp;
  const auto& reply = r.smtp_reply;
  // Repetitive by design: the hot path's direct writer spells out one field
  // after another in byte order (name, then value), so that it stays as
  // fast as a memcpy run and reads next to the document it writes; runs of
  // fields alike in shape are different fields. The differential tests in
  // tests/http_unit keep it byte-identical to the reference.
  json_writer w{out, policy == bad_utf8::replace};
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
  // Issue #30: who runs the first MX host, named when the route was
  // resolved.
  w.raw(",\"provider\":");
  if (r.route && r.route->provider) {
    w.raw("{\"kind\":");
    w.text(core::provider::to_string(r.route->provider->kind));
    w.raw(",\"name\":");
    w.text(r.route->provider->name);
    w.raw("}");
  } else {
    w.null();
  }
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
  if (!probed(s, reply)) {
    // Most answers: no probe asked or none made, every member at its
    // default (the differential tests generate this case on its own).
    w.raw("{\"attempts\":0,\"catchAll\":null,\"checked\":false,\"code\":null,"
          "\"deliverable\":null,\"disabled\":false,\"enhancedCode\":null,"
          "\"failure\":null,\"fullInbox\":false,\"greylisted\":false,"
          "\"host\":null,\"message\":null,\"timedOut\":false");
  } else {
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
    w.raw(",\"failure\":");
    if (s.failure)
      w.text(core::validation::to_string(*s.failure));
    else
      w.null();
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
  }
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

std::string validation_result_text(const actors::validation::result& r,
                                   bad_utf8 policy) {
  auto out = text_pool::take();
  out.reserve(1280);
  write_validation_result(out, r, policy);
  return out;
}

} // namespace mailassay::http::codec
