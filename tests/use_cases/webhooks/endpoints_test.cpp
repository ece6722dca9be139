#include "security/secret_box.hpp"
#include "tests/use_cases/fixture.hpp"
#include "use_cases/webhooks/use_cases.hpp"

using namespace mailassay;
using namespace mailassay::use_cases::testing;
using core::errc;
namespace acc = core::account;
namespace wuc = use_cases::webhooks;
namespace wh = core::webhooks;

namespace {

const char* server_key =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

wuc::new_endpoint_input endpoint(std::string url) {
  wuc::new_endpoint_input in;
  in.url = std::move(url);
  in.events = {wh::event_type::batch_completed};
  in.description = "jobs";
  return in;
}

} // namespace

TEST_SUITE("use_cases.webhooks") {
  TEST_CASE_TEMPLATE("an owner creates an endpoint whose secret is sealed, "
                     "shown once, and rotated",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.webhooks.secret_key = server_key;
    auto owner = w.user(w.signup("owner@example.com"));
    auto e = w.env();
    auto made =
        wuc::create_endpoint(e, owner, endpoint("https://hooks.example/x"));
    REQUIRE_MESSAGE(made.has_value(), storage::testing::why(made));
    CHECK(made->endpoint.organization_id == owner.organization_id());
    CHECK(made->endpoint.status == wh::endpoint_status::active);
    CHECK(made->endpoint.credits_low_threshold ==
          w.cfg.webhooks.credits_low_threshold);
    CHECK_FALSE(made->secret.empty());
    // Stored sealed: the record holds no clear secret.
    auto stored = wuc::get_endpoint(e, owner, made->endpoint.id);
    REQUIRE(stored.has_value());
    CHECK(stored->sealed_secret.find(made->secret) == std::string::npos);
    auto key = security::secret_box_key_from_hex(server_key);
    REQUIRE(key.has_value());
    CHECK(security::open_sealed(*key, stored->sealed_secret,
                                made->endpoint.id) == made->secret);

    auto rotated = wuc::rotate_secret(e, owner, made->endpoint.id);
    REQUIRE_MESSAGE(rotated.has_value(), storage::testing::why(rotated));
    CHECK(rotated->secret != made->secret);
    CHECK(rotated->endpoint.sealed_previous_secret == stored->sealed_secret);
    CHECK(security::open_sealed(*key, rotated->endpoint.sealed_secret,
                                made->endpoint.id) == rotated->secret);
    CHECK(rotated->endpoint.previous_secret_expires_at ==
          w.now + w.cfg.webhooks.rotation_grace_seconds);
  }

  TEST_CASE_TEMPLATE("URLs are checked: https only unless allowed, no "
                     "private address",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.webhooks.secret_key = server_key;
    auto owner = w.user(w.signup("owner@example.com"));
    auto e = w.env();
    CHECK(code_of(wuc::create_endpoint(e, owner,
                                       endpoint("http://hooks.example/x"))) ==
          errc::validation_failed);
    CHECK(code_of(wuc::create_endpoint(e, owner,
                                       endpoint("https://127.0.0.1/x"))) ==
          errc::validation_failed);
    auto listed = wuc::list_endpoints(e, owner);
    REQUIRE(listed.has_value());
    CHECK(listed->empty());
    w.cfg.webhooks.allow_http = true;
    auto e2 = w.env();
    CHECK(wuc::create_endpoint(e2, owner, endpoint("http://hooks.example/x"))
              .has_value());
  }

  TEST_CASE_TEMPLATE("members read endpoints but do not manage them; other "
                     "organizations do not see them",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.webhooks.secret_key = server_key;
    auto owner = w.user(w.signup("owner@example.com", "A"));
    auto stranger = w.user(w.signup("b@example.com", "B"));
    auto e = w.env();
    auto made =
        wuc::create_endpoint(e, owner, endpoint("https://hooks.example/x"));
    REQUIRE(made.has_value());
    REQUIRE(
        uc::add_member(e, owner,
                       {"m@example.com", "member pw", "M", acc::role::member})
            .has_value());
    auto ms = uc::login(e, "m@example.com", "member pw");
    REQUIRE(ms.has_value());
    auto member = w.user(*ms);
    auto id = made->endpoint.id;
    CHECK(wuc::get_endpoint(e, member, id).has_value());
    CHECK(message_of(wuc::delete_endpoint(e, member, id)) ==
          "Only owners and admins can manage webhooks");
    CHECK(code_of(wuc::rotate_secret(e, member, id)) == errc::forbidden);
    CHECK(code_of(wuc::send_test(e, member, id, w.now * 1000)) ==
          errc::forbidden);
    CHECK(code_of(wuc::get_endpoint(e, stranger, id)) == errc::not_found);
    CHECK(code_of(wuc::delete_endpoint(e, stranger, id)) == errc::not_found);

    auto ping = wuc::send_test(e, owner, id, w.now * 1000);
    REQUIRE_MESSAGE(ping.has_value(), storage::testing::why(ping));
    CHECK(ping->event == wh::event_type::ping);
    auto deliveries = wuc::list_deliveries(e, member, id, 10);
    REQUIRE(deliveries.has_value());
    CHECK(deliveries->size() == 1);
    REQUIRE(wuc::delete_endpoint(e, owner, id).has_value());
    CHECK(code_of(wuc::get_endpoint(e, owner, id)) == errc::not_found);
  }

  TEST_CASE_TEMPLATE("an organization has at most max_endpoints endpoints; a "
                     "missing server key is an internal error",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto e = w.env();
    CHECK(code_of(wuc::create_endpoint(e, owner,
                                       endpoint("https://hooks.example/x"))) ==
          errc::internal);
    w.cfg.webhooks.secret_key = server_key;
    w.cfg.webhooks.max_endpoints = 2;
    auto e2 = w.env();
    REQUIRE(wuc::create_endpoint(e2, owner, endpoint("https://a.example/1"))
                .has_value());
    REQUIRE(wuc::create_endpoint(e2, owner, endpoint("https://a.example/2"))
                .has_value());
    auto third =
        wuc::create_endpoint(e2, owner, endpoint("https://a.example/3"));
    CHECK(code_of(third) == errc::validation_failed);
  }
}
