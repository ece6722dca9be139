#include "core/validation/verdict.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

using namespace mailassay::core;
using validation::status;

namespace {

syntax::parsed_address parsed(std::string_view input) {
  syntax::options opts;
  return syntax::parse(input, opts);
}

// The SMTP probe found the mailbox.
validation::smtp_facts accepted() {
  validation::smtp_facts s;
  s.attempted = true;
  s.checked = true;
  s.deliverable = true;
  s.catch_all = false;
  return s;
}

risk::random_verdict random_yes() {
  risk::random_verdict r;
  r.is_random = true;
  r.score = 0.9;
  r.reason = risk::random_reason::digit_mix;
  return r;
}

struct row {
  const char* what;
  validation::facts facts;
  status state;
  std::string_view reason;
  int score;
};

} // namespace

TEST_SUITE("core.validation") {
  TEST_CASE("decides status, reason and score from a table of facts") {
    const auto good = parsed("anna@example-shop.de");
    const auto bad = parsed("anna@@example-shop.de");
    const auto special = parsed("anna@mail.test");
    const auto literal = parsed("anna@[192.0.2.1]");
    REQUIRE(good.valid);
    REQUIRE_FALSE(bad.valid);
    REQUIRE(special.reason == syntax::reason_special_use_domain);
    REQUIRE(literal.ip_literal);

    auto f = [&](const syntax::parsed_address& a) {
      validation::facts x;
      x.address = &a;
      x.disposable = false;
      x.role_account = false;
      x.random = risk::random_verdict{};
      return x;
    };
    auto with_route = [&](dns::route_kind k, validation::smtp_facts s) {
      auto x = f(good);
      x.route = k;
      x.smtp = s;
      return x;
    };
    auto smtp = [](auto change) {
      auto s = accepted();
      change(s);
      return s;
    };
    // Scores: band low + (high - low) * max(0, 100 - penalties) / 100.
    const row rows[] = {
        {"bad syntax", f(bad), status::invalid, "invalid_syntax", 0},
        {"special-use domain", f(special), status::invalid, "invalid_domain",
         0},
        {"no such domain", with_route(dns::route_kind::invalid_domain, {}),
         status::invalid, "invalid_domain", 0},
        {"null MX", with_route(dns::route_kind::null_mx, {}), status::invalid,
         "null_mx", 0},
        {"no MX and no address", with_route(dns::route_kind::no_mx, {}),
         status::invalid, "no_mx", 0},
        {"mailbox disabled", with_route(dns::route_kind::mx, smtp([](auto& s) {
                                          s.disabled = true;
                                        })),
         status::invalid, "mailbox_disabled", 0},
        {"mailbox rejected", with_route(dns::route_kind::mx, smtp([](auto& s) {
                                          s.deliverable = false;
                                        })),
         status::invalid, "rejected_email", 0},
        {"accepted", with_route(dns::route_kind::mx, accepted()), status::valid,
         "accepted_email", 100},
        {"no SMTP check: -10", f(good), status::valid, "accepted_email", 98},
        {"implicit MX: -10",
         with_route(dns::route_kind::implicit_mx, accepted()), status::valid,
         "accepted_email", 98},
        {"typo: -35 -10",
         [&] {
           auto x = f(good);
           x.typo = true;
           return x;
         }(),
         status::risky, "typo", 61},
        {"disposable: -60 -10",
         [&] {
           auto x = f(good);
           x.disposable = true;
           return x;
         }(),
         status::risky, "disposable", 51},
        {"typo wins over disposable: -35 -60 -10 floors the band",
         [&] {
           auto x = f(good);
           x.disposable = true;
           x.typo = true;
           return x;
         }(),
         status::risky, "typo", 40},
        {"DNS error: -50 -10", with_route(dns::route_kind::dns_error, {}),
         status::unknown, "dns_error", 27},
        {"disposable holds whatever DNS says",
         [&] {
           auto x = with_route(dns::route_kind::dns_error, {});
           x.disposable = true;
           return x;
         }(),
         status::risky, "disposable", 40},
        {"SMTP gave no answer: -30",
         with_route(dns::route_kind::mx,
                    smtp([](auto& s) { s.deliverable.reset(); })),
         status::unknown, "smtp_error", 33},
        {"SMTP asked, no server answered (checked false): -30",
         with_route(dns::route_kind::mx, smtp([](auto& s) {
                      s.checked = false;
                      s.deliverable.reset();
                      s.timed_out = true;
                    })),
         status::unknown, "timeout", 33},
        {"greylisted, then accepted: greylisting costs nothing",
         with_route(dns::route_kind::mx,
                    smtp([](auto& s) { s.greylisted = true; })),
         status::valid, "accepted_email", 100},
        {"deferred through every retry: -30",
         with_route(dns::route_kind::mx, smtp([](auto& s) {
                      s.deliverable.reset();
                      s.greylisted = true;
                      s.deferred = true;
                    })),
         status::unknown, "smtp_error", 33},
        {"SMTP timed out: -30",
         with_route(dns::route_kind::mx, smtp([](auto& s) {
                      s.deliverable.reset();
                      s.timed_out = true;
                    })),
         status::unknown, "timeout", 33},
        {"mailbox full: -35", with_route(dns::route_kind::mx, smtp([](auto& s) {
                                           s.deliverable = false;
                                           s.full_inbox = true;
                                         })),
         status::risky, "mailbox_full", 65},
        {"IP literal: -40 -10", f(literal), status::risky, "ip_literal", 59},
        {"catch-all: -30", with_route(dns::route_kind::mx, smtp([](auto& s) {
                                        s.catch_all = true;
                                      })),
         status::risky, "catch_all", 67},
        {"role account: -20 -10",
         [&] {
           auto x = f(good);
           x.role_account = true;
           return x;
         }(),
         status::risky, "role_account", 67},
        {"random: -25 -10",
         [&] {
           auto x = f(good);
           x.random = random_yes();
           return x;
         }(),
         status::risky, "random", 65},
        {"role before random: -20 -25 -10",
         [&] {
           auto x = f(good);
           x.role_account = true;
           x.random = random_yes();
           return x;
         }(),
         status::risky, "role_account", 57},
        {"free provider costs nothing",
         [&] {
           auto x = with_route(dns::route_kind::mx, accepted());
           x.free_provider = true;
           return x;
         }(),
         status::valid, "accepted_email", 100},
        {"checks switched off (null) count as clear",
         [&] {
           auto x = with_route(dns::route_kind::mx, accepted());
           x.disposable.reset();
           x.role_account.reset();
           x.random.reset();
           return x;
         }(),
         status::valid, "accepted_email", 100},
    };
    for (const auto& r : rows) {
      CAPTURE(r.what);
      auto v = validation::decide(r.facts);
      CHECK(v.state == r.state);
      CHECK(v.reason == r.reason);
      CHECK(v.score == r.score);
      if (r.score == 100)
        CHECK(v.signals.empty());
      for (const auto& c : v.signals)
        CHECK(c.points < 0);
    }
  }

  TEST_CASE("lists every penalty it applied as a signal") {
    const auto a = parsed("info@example-shop.de");
    validation::facts f;
    f.address = &a;
    f.disposable = true;
    f.role_account = true;
    f.route = dns::route_kind::implicit_mx;
    auto v = validation::decide(f);
    REQUIRE(v.signals.size() == 4);
    CHECK(v.signals[0].signal == "disposable");
    CHECK(v.signals[0].points == -60);
    CHECK(v.signals[1].signal == "role_account");
    CHECK(v.signals[1].points == -20);
    CHECK(v.signals[2].signal == "implicit_mx");
    CHECK(v.signals[2].points == -10);
    CHECK(v.signals[3].signal == "no_smtp_check");
    CHECK(v.signals[3].points == -10);
  }

  TEST_CASE("names the SMTP signal after its cause") {
    const auto a = parsed("anna@example-shop.de");
    validation::facts f;
    f.address = &a;
    f.route = dns::route_kind::mx;
    f.smtp = accepted();
    f.smtp.deliverable.reset();
    auto signal = [&] { return validation::decide(f).signals.at(0).signal; };
    CHECK(signal() == "smtp_error");
    f.smtp.timed_out = true;
    CHECK(signal() == "timeout");
    // A deferral said why there is no answer; a greylisting an earlier pass
    // met, then a time-out, is a time-out.
    f.smtp.greylisted = true;
    CHECK(signal() == "timeout");
    f.smtp.deferred = true;
    CHECK(signal() == "greylisted");
    f.smtp.unroutable = true;
    CHECK(signal() == "unroutable_mx");
    // Not asked at all: no SMTP signal but the missing check.
    f.smtp = {};
    CHECK(signal() == "no_smtp_check");
  }

  TEST_CASE("keeps every score inside its status band") {
    const auto a = parsed("anna@example-shop.de");
    // Every combination of the soft signals, with and without SMTP.
    for (int bits = 0; bits < 1 << 8; ++bits) {
      validation::facts f;
      f.address = &a;
      f.disposable = (bits & 1) != 0;
      f.role_account = (bits & 2) != 0;
      if (bits & 4)
        f.random = random_yes();
      f.typo = (bits & 8) != 0;
      if (bits & 16)
        f.route = dns::route_kind::dns_error;
      if (bits & 32) {
        f.smtp = accepted();
        f.smtp.catch_all = (bits & 64) != 0;
        if (bits & 128)
          f.smtp.deliverable.reset();
      }
      CAPTURE(bits);
      auto v = validation::decide(f);
      switch (v.state) {
        case status::valid:
          CHECK(v.score >= 80);
          CHECK(v.score <= 100);
          break;
        case status::risky:
          CHECK(v.score >= 40);
          CHECK(v.score <= 79);
          break;
        case status::unknown:
          CHECK(v.score >= 20);
          CHECK(v.score <= 39);
          break;
        case status::invalid:
          CHECK(v.score >= 0);
          CHECK(v.score <= 19);
          break;
      }
    }
  }

  TEST_CASE("names each status and parses the names back, nothing else") {
    struct row {
      status state;
      std::string_view text;
    };
    for (auto r :
         {row{status::valid, "valid"}, row{status::invalid, "invalid"},
          row{status::risky, "risky"}, row{status::unknown, "unknown"}}) {
      CHECK(validation::to_string(r.state) == r.text);
      CHECK(validation::parse_status(r.text) == r.state);
    }
    for (std::string_view text : {"", "Valid", "valid ", "queued", "other"})
      CHECK_FALSE(validation::parse_status(text).has_value());
  }
}
