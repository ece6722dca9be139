// The validation result written directly (codec::write_validation_result)
// against the reference it replaced: nlohmann's `validation_result(r).dump()`,
// over many generated results of every shape.
#include "http/codec/accounts.hpp"
#include "http/codec/validation.hpp"
#include "tests/http_unit/generator.hpp"
#include "tests/http_unit/reference_writers.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace mailassay;
namespace codec = mailassay::http::codec;
using actors::validation::result;

namespace {

using mailassay::testing::generator;

// Pieces of text covering what JSON escapes and what it passes through.
const std::vector<std::string> pieces = {
    "jane.doe",
    "example.com",
    "a",
    "",
    "x@y",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "new\nline",
    "cr\r",
    "\b\f",
    std::string("nul\0x", 5),
    "\x01\x1f",
    "del\x7f",
    "/slash/",
    "M\xc3\xbcller",
    "\xe4\xb8\xad\xe6\x96\x87",
    "\xf0\x9f\x98\x80",
    "\xd0\xb8\xd0\xb2\xd0\xb0\xd0\xbd",
    "xn--mller-kva.de",
    "550 5.1.1 <jane@example.com>: Recipient address rejected",
    "user unknown; see https://example.com/?a=1&b=<2>",
    "'single'",
    "{}[]:,",
    "     ",
    "\\u0041"};

// Bytes that are not UTF-8: a lone continuation, a truncated sequence, an
// overlong form, 0xFF.
const std::vector<std::string> broken = {"\x80",          "\xc3", "abc\xc3",
                                         "\xc0\xaf",      "\xff", "\xe4\xb8",
                                         "ok\xed\xa0\x80"};

std::string text(generator& g, int max_pieces = 3) {
  std::string s;
  auto n = g.below(std::size_t(max_pieces) + 1);
  for (std::size_t i = 0; i < n; ++i)
    s += g.pick(pieces);
  return s;
}

std::optional<bool> maybe_flag(generator& g) {
  switch (g.below(3)) {
    case 0: return std::nullopt;
    case 1: return false;
    default: return true;
  }
}

std::optional<std::string> maybe_text(generator& g) {
  if (g.chance(40))
    return std::nullopt;
  return text(g);
}

double some_double(generator& g) {
  static const std::vector<double> special = {
      0.0, -0.0, 1.0, 0.5, 0.1, 1e-7, 123456789.123456, 1e16, 1e-4, 2.5e-5,
      std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::infinity(), 0.3335, 0.9995, 17.0,
      // Around the thousandths writer's edges: rounding to zero (either
      // sign), the first thousandth, the largest values it writes itself.
      0.0004, -0.0004, 0.0005, -1.5, 123.4565, 999999999999.999,
      999999999999.9996, 1e12};
  if (g.chance(30))
    return g.pick(special);
  return double(g.next() % 100000000) / double(1 + g.below(100000));
}

result random_result(generator& g) {
  using core::dns::rcode;
  using core::dns::route_kind;
  result r;
  auto& a = r.address;
  a.valid = g.chance(70);
  a.input = text(g);
  a.local_part = text(g, 2);
  a.domain = text(g, 2);
  a.ascii_domain = text(g, 2);
  a.detail = g.chance(50) ? std::string{} : text(g);
  a.normalized = text(g);
  a.ip_literal = g.chance(10);
  a.needs_smtputf8 = g.chance(10);
  if (g.chance(70)) {
    core::dns::mail_route route;
    route.kind = static_cast<route_kind>(g.below(6));
    route.cause = static_cast<rcode>(g.below(7));
    auto hosts = g.below(4);
    for (std::size_t i = 0; i < hosts; ++i)
      route.hosts.push_back(
          {text(g, 2), static_cast<std::uint16_t>(g.next() & 0xFFFF)});
    if (g.chance(50))
      route.provider = core::provider::provider_ref{
          text(g, 1), g.chance(50) ? core::provider::provider_kind::gateway
                                   : core::provider::provider_kind::mailbox};
    r.route = std::make_shared<const core::dns::mail_route>(route);
  }
  auto& c = r.checks;
  c.disposable = maybe_flag(g);
  c.free_provider = g.chance(30);
  c.role_account = maybe_flag(g);
  c.role = text(g, 1);
  if (g.chance(70))
    c.random = core::risk::random_verdict{g.chance(20), some_double(g)};
  c.suggested_domain = maybe_text(g);
  c.first_name = maybe_text(g);
  r.enrichment = g.chance(30);
  auto& s = r.smtp;
  s.checked = g.chance(50);
  s.deliverable = maybe_flag(g);
  s.catch_all = maybe_flag(g);
  s.greylisted = g.chance(20);
  s.full_inbox = g.chance(20);
  s.disabled = g.chance(20);
  s.timed_out = g.chance(20);
  if (g.chance(40))
    s.failure = static_cast<core::validation::smtp_failure>(g.below(5));
  auto& reply = r.smtp_reply;
  reply.host = g.chance(50) ? std::string{} : text(g, 2);
  reply.attempts = g.below(5);
  reply.code = g.chance(40) ? 0 : int(200 + g.below(400));
  reply.enhanced = g.chance(50) ? std::string{} : text(g, 1);
  reply.message = g.chance(50) ? std::string{} : text(g, 4);
  // No probe: every SMTP member at its default, the writer's fast path.
  if (g.chance(25)) {
    s = {};
    reply = {};
  }
  r.verdict.state = static_cast<core::validation::status>(g.below(4));
  r.verdict.reason = text(g, 1);
  r.verdict.score = int(g.below(141)) - 20;
  auto signals = g.below(5);
  for (std::size_t i = 0; i < signals; ++i)
    r.verdict.signals.push_back({text(g, 1), int(g.below(201)) - 100});
  r.credits_used = g.chance(70) ? 0
                                : static_cast<std::int64_t>(g.next() >> 1) *
                                      (g.chance(50) ? -1 : 1);
  r.duration_ms = some_double(g);
  r.sandbox = g.chance(20);
  return r;
}

// Puts bytes that are not UTF-8 into one of the string fields.
void break_one_field(generator& g, result& r) {
  const auto& bad = g.pick(broken);
  switch (g.below(11)) {
    case 0: r.address.input += bad; break;
    case 1: r.address.local_part = bad + r.address.local_part; break;
    case 2: r.address.detail += bad; break;
    case 3: r.smtp_reply.message += bad; break;
    case 4: r.smtp_reply.host = bad; break;
    case 5: r.verdict.reason += bad; break;
    case 6: r.checks.suggested_domain = bad; break;
    case 7: r.checks.first_name = bad; break;
    case 9:
      if (r.route && r.route->provider) {
        auto changed = *r.route;
        changed.provider->name += bad;
        r.route = std::make_shared<const core::dns::mail_route>(changed);
        break;
      }
      [[fallthrough]];
    case 8:
      if (r.route) {
        auto changed = *r.route;
        changed.hosts.push_back({bad, 1});
        r.route = std::make_shared<const core::dns::mail_route>(changed);
      }
      break;
    default: r.address.normalized += bad; break;
  }
}

// What the reference does: its text, or the message of what it threw.
struct outcome {
  std::string text;
  std::string error;
};

outcome reference(const result& r) {
  try {
    return {testing::validation_result(r).dump(), {}};
  } catch (const nlohmann::json::type_error& e) {
    return {{}, e.what()};
  }
}

outcome written(const result& r) {
  try {
    return {codec::validation_result_text(r), {}};
  } catch (const nlohmann::json::type_error& e) {
    return {{}, e.what()};
  }
}

} // namespace

TEST_SUITE("http.codec") {
  TEST_CASE("the written result is byte for byte the nlohmann dump") {
    generator g{0x6d61696c61737361ULL};
    for (int i = 0; i < 40000; ++i) {
      auto r = random_result(g);
      auto want = reference(r);
      REQUIRE(want.error.empty());
      auto got = codec::validation_result_text(r);
      if (got != want.text) {
        INFO("case " << i);
        REQUIRE(got == want.text);
      }
    }
  }

  TEST_CASE("text that is not UTF-8 throws what dump() throws") {
    generator g{42};
    int thrown = 0;
    for (int i = 0; i < 20000; ++i) {
      auto r = random_result(g);
      break_one_field(g, r);
      auto want = reference(r);
      auto got = written(r);
      if (got.text != want.text || got.error != want.error) {
        INFO("case " << i);
        REQUIRE(got.error == want.error);
        REQUIRE(got.text == want.text);
      }
      thrown += want.error.empty() ? 0 : 1;
    }
    // The generator does reach the error path (and its index and byte).
    CHECK(thrown > 10000);
  }

  TEST_CASE("the CLI's text writes what is not UTF-8 as text_of() does") {
    // `mailassay check` echoes its input, which may be any bytes.
    generator g{7};
    for (int i = 0; i < 20000; ++i) {
      auto r = random_result(g);
      break_one_field(g, r);
      auto want = codec::text_of(testing::validation_result(r));
      auto got = codec::validation_result_text(r, codec::bad_utf8::replace);
      if (got != want) {
        INFO("case " << i);
        REQUIRE(got == want);
      }
    }
  }

  TEST_CASE("an SMTP answer is written with every detail") {
    result r;
    r.address.valid = true;
    r.address.input = "Jane@Example.com";
    r.address.local_part = "Jane";
    r.address.domain = "example.com";
    r.address.ascii_domain = "example.com";
    r.address.normalized = "jane@example.com";
    core::dns::mail_route route;
    route.kind = core::dns::route_kind::mx;
    route.hosts = {{"mx1.example.com", 10}, {"mx2.example.com", 20}};
    r.route = std::make_shared<const core::dns::mail_route>(route);
    r.checks.disposable = false;
    r.checks.role_account = false;
    r.checks.random = core::risk::random_verdict{false, 0.12345};
    r.smtp.checked = true;
    r.smtp.deliverable = false;
    r.smtp_reply = {"mx1.example.com", 1, 550, "5.1.1",
                    "5.1.1 <jane@example.com>: \"no\" such user"};
    r.verdict.state = core::validation::status::invalid;
    r.verdict.reason = "mailbox_not_found";
    r.verdict.signals = {{"mailbox_not_found", -100}};
    r.credits_used = 1;
    r.duration_ms = 12.3456;
    auto text = codec::validation_result_text(r);
    CHECK(text == testing::validation_result(r).dump());
    auto back = nlohmann::json::parse(text);
    CHECK(back["smtp"]["code"] == 550);
    CHECK(back["smtp"]["message"] ==
          "5.1.1 <jane@example.com>: \"no\" such user");
    CHECK(back["dns"]["mx"][1]["priority"] == 20);
    CHECK(back["random"]["score"] == 0.123);
    CHECK(back["durationMs"] == 12.346);
    CHECK(back["creditsUsed"] == 1);
  }
}

namespace {

// A key and its organization of every shape, texts including what JSON
// escapes and bytes that are not UTF-8.
std::pair<core::account::api_key, core::account::organization>
random_key(generator& g) {
  auto any_text = [&g] {
    return g.chance(10) ? text(g) + g.pick(broken) : text(g);
  };
  core::account::api_key k;
  k.id = any_text();
  k.organization_id = any_text();
  k.name = any_text();
  k.prefix = g.chance(50) ? "svc_test_" + text(g, 1) : "svc_live_" + text(g, 1);
  k.status = g.chance(50) ? core::account::key_status::active
                          : core::account::key_status::revoked;
  for (auto n = g.below(4); n > 0; --n)
    k.allowed_domains.push_back(any_text());
  k.config = {g.chance(50), g.chance(50), g.chance(50), g.chance(50),
              g.chance(50)};
  auto limit = [&g]() -> std::optional<std::int64_t> {
    if (g.chance(40))
      return std::nullopt;
    return static_cast<std::int64_t>(g.next() % 4000000000ull) - 1000;
  };
  k.limits = {limit(), limit(), limit()};
  auto time = [&g] {
    return static_cast<std::int64_t>(g.next() % 400000000000ull) - 100000000000;
  };
  k.created_at = time();
  k.updated_at = time();
  core::account::organization org{any_text(), any_text(), time()};
  return {k, org};
}

} // namespace

TEST_SUITE("http.codec") {
  TEST_CASE("a cached key's `me` is byte for byte text_of(me(view))") {
    generator g{0x6d65ULL};
    for (int i = 0; i < 20000; ++i) {
      auto [k, org] = random_key(g);
      use_cases::accounts::principal who;
      who.type = use_cases::accounts::principal::kind::api_key;
      who.key = std::make_shared<const core::account::api_key>(k);
      auto want = codec::text_of(
          codec::me(use_cases::accounts::me_view{who, std::nullopt, org}));
      std::string got = "prefix:";
      codec::write_key_me(got, k, org);
      if (got != "prefix:" + want) {
        INFO("case " << i);
        REQUIRE(got == "prefix:" + want);
      }
    }
  }
}
