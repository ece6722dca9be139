// Erasing an organization (DELETE /v2/organization, docs/privacy.md): every
// row it owns goes, another organization's stay.
#include "support.hpp"

#include "core/batch/job.hpp"
#include "core/webhooks/records.hpp"

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;
namespace batch = mailassay::core::batch;
namespace wh = mailassay::core::webhooks;

namespace {

// Gives organization `org` (owner u-<org>) one of everything it can own: a
// second member with a refresh token, a key with usage, credits, an
// endpoint with a delivery, a finished job and an active one with rows.
void fill(store& s, const std::string& org) {
  create_org(s, org, "owner@" + org + ".example", 100);
  REQUIRE(s.add_member(org, make_user("m-" + org, "m@" + org + ".example"),
                       acc::role::member));
  acc::refresh_token tok{"t-" + org, "th-" + org, "f-" + org, "m-" + org, org,
                         9999,       false,       false,      1000};
  REQUIRE(s.insert_refresh_token(tok));
  REQUIRE(s.insert_api_key(make_key("k-" + org, org)));
  REQUIRE(
      s.add_usage({{"k-" + org, org, "2026-11-20", 2, 1, 1, {"h1", "h2"}}}));
  REQUIRE(s.add_credits(org, 50, "grant", "", 1100));
  wh::endpoint w;
  w.id = "w-" + org;
  w.organization_id = org;
  w.url = "https://hooks.example.com/" + org;
  w.events = {wh::event_type::batch_cancelled};
  w.sealed_secret = "x1.sealed";
  w.created_at = w.updated_at = 100;
  REQUIRE(s.insert_webhook(w));
  REQUIRE(s.enqueue_webhook_ping(org, w.id, 1000, {}));
  for (const auto* id : {"done", "active"}) {
    batch::job j;
    j.id = std::string{id} + "-" + org;
    j.organization_id = org;
    j.file_name = "f.csv";
    j.email_column = "email";
    j.total_rows = 2;
    j.unique_emails = 2;
    j.created_at = 500;
    std::vector<batch::item> items(2);
    items[0].seq = 0;
    items[0].email = "a@" + org + ".example";
    items[1].seq = 1;
    items[1].email = "b@" + org + ".example";
    REQUIRE(s.create_batch_job(j, items));
    // One active job at a time: the first one finishes (cancelled).
    if (j.id == "done-" + org)
      REQUIRE(s.cancel_batch_job(org, j.id, 600));
  }
}

// Rows of `org` in each table it owns something in.
void check_rows(const test_db& t, const std::string& org, long long expected) {
  auto q = "'" + org + "'";
  auto of_org = [&](const std::string& table) {
    return t.query_int("SELECT COUNT(*) FROM " + table +
                       " WHERE organization_id = " + q);
  };
  CAPTURE(org);
  CHECK(t.query_int("SELECT COUNT(*) FROM organizations WHERE id = " + q) ==
        expected);
  CHECK(t.query_int("SELECT COUNT(*) FROM users WHERE id IN ('u-" + org +
                    "', 'm-" + org + "')") == 2 * expected);
  for (const auto* table : {"memberships", "refresh_tokens", "api_keys",
                            "credit_accounts", "credit_ledger", "usage_daily",
                            "batch_jobs", "webhooks", "webhook_deliveries"})
    CHECK_MESSAGE((of_org(table) > 0) == (expected > 0), table);
  CHECK((t.query_int("SELECT COUNT(*) FROM usage_addresses WHERE key_id = "
                     "'k-" +
                     org + "'") > 0) == (expected > 0));
  CHECK((t.query_int("SELECT COUNT(*) FROM batch_items WHERE job_id IN "
                     "('done-" +
                     org + "', 'active-" + org + "')") > 0) == (expected > 0));
  CHECK((t.query_int("SELECT COUNT(*) FROM webhook_attempts WHERE "
                     "delivery_id IN (SELECT id FROM webhook_deliveries WHERE "
                     "organization_id = " +
                     q + ")") == 0));
}

} // namespace

TEST_SUITE("storage.organization_erase") {
  TEST_CASE_TEMPLATE("erasing an organization removes every row it owns and "
                     "no other organization's",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    fill(s, "o1");
    fill(s, "o2");
    check_rows(t, "o1", 1);
    auto erased = s.erase_organization("o1");
    REQUIRE_MESSAGE(erased.has_value(), why(erased));
    // What running parts must hear of: its key, its active job.
    auto hashes = erased->key_hashes;
    REQUIRE(hashes.size() == 1);
    CHECK(s.find_api_key_by_hash(hashes[0]).error_value().code ==
          errc::not_found);
    CHECK(erased->active_jobs == std::vector<std::string>{"active-o1"});
    check_rows(t, "o1", 0);
    check_rows(t, "o2", 1);
    CHECK(s.find_member_by_email("m@o1.example").error_value().code ==
          errc::not_found);
    CHECK(s.find_refresh_token("th-o1").error_value().code == errc::not_found);
    CHECK(s.find_member_by_email("m@o2.example").has_value());
    // Once more, or an organization that never was: not found.
    CHECK(s.erase_organization("o1").error_value().code == errc::not_found);
    CHECK(s.erase_organization("nobody").error_value().code == errc::not_found);
  }
}
