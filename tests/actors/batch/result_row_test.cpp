// A validation result as a batch item: which flag each part of the result
// becomes (actors/batch/result_row), and that its detail is what the
// handed-in writer makes of them.

#include "actors/batch/result_row.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>

namespace batch = mailassay::actors::batch;
namespace cb = mailassay::core::batch;
namespace core = mailassay::core;
using mailassay::actors::validation::result;

namespace {

std::shared_ptr<core::dns::mail_route> route(core::dns::route_kind kind) {
  auto r = std::make_shared<core::dns::mail_route>();
  r->kind = kind;
  return r;
}

} // namespace

TEST_SUITE("actors.batch.result_row") {
  TEST_CASE("an invalid address without route or checks has unknown flags") {
    result r;
    auto f = batch::flags_of(r);
    CHECK_FALSE(f.normalized);
    CHECK_FALSE(f.mx);
    CHECK_FALSE(f.disposable);
    CHECK_FALSE(f.role);
    CHECK_FALSE(f.free);
    CHECK_FALSE(f.random);
    CHECK_FALSE(f.catch_all);
    CHECK_FALSE(f.smtp_checked);
    CHECK_FALSE(f.suggestion);
    CHECK_FALSE(f.provider);
  }

  TEST_CASE("each part of a result becomes its flag") {
    result r;
    r.address.valid = true;
    r.address.normalized = "anna@gmial.com";
    r.address.local_part = "anna";
    r.checks.disposable = false;
    r.checks.role_account = true;
    r.checks.free_provider = true;
    r.checks.random = core::risk::random_verdict{true, 0.9};
    r.checks.suggested_domain = "gmail.com";
    r.smtp.catch_all = false;
    r.smtp.checked = true;
    auto mx = route(core::dns::route_kind::mx);
    mx->provider = core::provider::provider_ref{
        "google", core::provider::provider_kind::mailbox};
    r.route = mx;
    auto f = batch::flags_of(r);
    CHECK(f.normalized == "anna@gmial.com");
    CHECK(f.mx == true);
    CHECK(f.disposable == false);
    CHECK(f.role == true);
    CHECK(f.free);
    CHECK(f.random == true);
    CHECK(f.catch_all == false);
    CHECK(f.smtp_checked);
    CHECK(f.suggestion == "anna@gmail.com");
    REQUIRE(f.provider);
    CHECK(f.provider->name == "google");
    CHECK(f.provider->kind == core::provider::provider_kind::mailbox);
  }

  TEST_CASE("mail has a route through MX hosts or an implicit MX only") {
    using core::dns::route_kind;
    for (auto [kind, mx] : {std::pair{route_kind::mx, true},
                            std::pair{route_kind::implicit_mx, true},
                            std::pair{route_kind::null_mx, false},
                            std::pair{route_kind::no_mx, false},
                            std::pair{route_kind::invalid_domain, false},
                            std::pair{route_kind::dns_error, false}}) {
      result r;
      r.route = route(kind);
      CAPTURE(core::dns::to_string(kind));
      CHECK(batch::flags_of(r).mx == mx);
    }
  }

  TEST_CASE("the item holds the verdict and the writer's detail") {
    result r;
    r.verdict.state = core::validation::status::risky;
    r.verdict.reason = "catch_all";
    r.verdict.score = 60;
    r.credits_used = 1;
    r.smtp.catch_all = true;
    cb::item_flags seen;
    auto it = batch::item_from_result(7, "x@example.com", r,
                                      [&](const cb::item_flags& f) {
                                        seen = f;
                                        return std::string{"written"};
                                      });
    CHECK(it.seq == 7);
    CHECK(it.email == "x@example.com");
    CHECK(it.done);
    CHECK(it.status == core::validation::status::risky);
    CHECK(it.reason == "catch_all");
    CHECK(it.score == 60);
    CHECK(it.credits == 1);
    CHECK(it.detail == "written");
    CHECK(seen.catch_all == true);
  }
}
