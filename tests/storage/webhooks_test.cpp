#include "support.hpp"

#include <algorithm>
#include <set>
#include <thread>

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;
namespace batch = mailassay::core::batch;
namespace wh = mailassay::core::webhooks;

namespace {

wh::endpoint make_endpoint(const std::string& id, const std::string& org,
                           std::vector<wh::event_type> events,
                           std::int64_t threshold = 0,
                           std::int64_t created_at = 100) {
  wh::endpoint w;
  w.id = id;
  w.organization_id = org;
  w.url = "https://hooks.example.com/" + id;
  w.description = "d-" + id;
  w.events = std::move(events);
  w.sealed_secret = "x1.sealed-" + id;
  w.credits_low_threshold = threshold;
  w.created_at = created_at;
  w.updated_at = created_at;
  return w;
}

const std::vector<wh::event_type> all_events{
    wh::event_type::batch_completed, wh::event_type::batch_failed,
    wh::event_type::batch_cancelled, wh::event_type::credits_low,
    wh::event_type::key_revoked};

// Organization o1 with endpoint `id` subscribed to every event.
void org_with_endpoint(store& s, const std::string& id) {
  create_org(s, "o1", "a@example.com");
  REQUIRE(s.insert_webhook(make_endpoint(id, "o1", all_events)));
}

// A queued job of `org` with two addresses.
batch::job queued_job(store& s, const std::string& id, const std::string& org) {
  batch::job j;
  j.id = id;
  j.organization_id = org;
  j.file_name = "f.csv";
  j.email_column = "email";
  j.total_rows = 2;
  j.unique_emails = 2;
  j.created_at = 500;
  std::vector<batch::item> items(2);
  items[0].seq = 0;
  items[0].email = "a@example.com";
  items[1].seq = 1;
  items[1].email = "b@example.com";
  REQUIRE(s.create_batch_job(j, items).has_value());
  return j;
}

std::vector<wh::delivery> deliveries(store& s, const std::string& org,
                                     const std::string& webhook) {
  auto r = s.list_webhook_deliveries(org, webhook, 100);
  REQUIRE_MESSAGE(r.has_value(), why(r));
  return *r;
}

// The value of a write that answers whether it applied; fails the test on
// an error.
bool applied(const mailassay::core::expected<bool>& r) {
  REQUIRE_MESSAGE(r.has_value(), why(r));
  return *r;
}

std::int64_t pruned(const mailassay::core::expected<std::int64_t>& r) {
  REQUIRE_MESSAGE(r.has_value(), why(r));
  return *r;
}

} // namespace

TEST_SUITE("storage.webhooks") {
  TEST_CASE_TEMPLATE("endpoints are stored, updated, listed and deleted per "
                     "organization",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com");
    create_org(s, "o2", "b@example.com");
    REQUIRE(s.insert_webhook(make_endpoint("whk_1", "o1", all_events, 50))
                .has_value());
    REQUIRE(
        s.insert_webhook(make_endpoint("whk_2", "o1",
                                       {wh::event_type::key_revoked}, 0, 200))
            .has_value());
    auto list = s.list_webhooks("o1");
    REQUIRE(list.has_value());
    REQUIRE(list->size() == 2);
    CHECK((*list)[0].id == "whk_1");
    CHECK((*list)[0].events == all_events);
    CHECK((*list)[0].credits_low_threshold == 50);
    CHECK((*list)[0].sealed_secret == "x1.sealed-whk_1");
    CHECK((*list)[0].status == wh::endpoint_status::active);
    CHECK((*list)[1].events ==
          std::vector<wh::event_type>{wh::event_type::key_revoked});
    CHECK(s.list_webhooks("o2")->empty());
    CHECK(s.get_webhook("o2", "whk_1").error_value().code == errc::not_found);

    webhook_update u;
    u.url = "https://other.example.com/";
    u.status = wh::endpoint_status::disabled;
    u.events = std::vector<wh::event_type>{wh::event_type::credits_low};
    u.credits_low_threshold = 7;
    auto updated = s.update_webhook("o1", "whk_1", u, 900);
    REQUIRE_MESSAGE(updated.has_value(), why(updated));
    CHECK(updated->url == "https://other.example.com/");
    CHECK(updated->description == "d-whk_1");
    CHECK(updated->status == wh::endpoint_status::disabled);
    CHECK(updated->updated_at == 900);
    CHECK(*s.get_webhook("o1", "whk_1") == *updated);
    CHECK(s.update_webhook("o2", "whk_1", u, 901).error_value().code ==
          errc::not_found);

    // A rotation keeps the old secret as the previous one.
    webhook_update r;
    r.sealed_secret = "x1.new";
    r.previous_secret_expires_at = 5000;
    auto rotated = s.update_webhook("o1", "whk_1", r, 950);
    REQUIRE(rotated.has_value());
    CHECK(rotated->sealed_secret == "x1.new");
    CHECK(rotated->sealed_previous_secret == "x1.sealed-whk_1");
    CHECK(rotated->previous_secret_expires_at == 5000);

    CHECK(s.delete_webhook("o2", "whk_1").error_value().code ==
          errc::not_found);
    REQUIRE(s.delete_webhook("o1", "whk_1").has_value());
    CHECK(s.get_webhook("o1", "whk_1").error_value().code == errc::not_found);
    CHECK(s.list_webhooks("o1")->size() == 1);
  }

  TEST_CASE_TEMPLATE("a job's end queues its event for the subscribed active "
                     "endpoints of its organization, in the same transaction",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com");
    create_org(s, "o2", "b@example.com");
    REQUIRE(s.insert_webhook(make_endpoint("all", "o1", all_events)));
    REQUIRE(s.insert_webhook(
        make_endpoint("keys", "o1", {wh::event_type::key_revoked})));
    auto off = make_endpoint("off", "o1", all_events);
    off.status = wh::endpoint_status::disabled;
    REQUIRE(s.insert_webhook(off));
    REQUIRE(s.insert_webhook(make_endpoint("other", "o2", all_events)));

    auto j = queued_job(s, "job1", "o1");
    auto claimed = s.claim_batch_job("me", 30, 600);
    REQUIRE(claimed.has_value());
    // Not held by this owner: refused, and nothing queued.
    CHECK(
        s.finish_batch_job("job1", "not-me", batch::job_status::completed, 700)
            .error_value()
            .code == errc::conflict);
    CHECK(deliveries(s, "o1", "all").empty());
    REQUIRE(s.finish_batch_job("job1", "me", batch::job_status::completed, 700)
                .has_value());
    auto got = deliveries(s, "o1", "all");
    REQUIRE(got.size() == 1);
    CHECK(got[0].event == wh::event_type::batch_completed);
    CHECK(got[0].subject_id == "job1");
    CHECK(got[0].organization_id == "o1");
    CHECK(got[0].created_ms == 700000);
    CHECK(got[0].next_attempt_ms == 700000);
    CHECK(got[0].status == wh::delivery_status::pending);
    CHECK(got[0].attempts == 0);
    CHECK(got[0].id.rfind("whd_", 0) == 0);
    CHECK(got[0].id.size() == 28);
    CHECK(deliveries(s, "o1", "keys").empty());
    CHECK(deliveries(s, "o1", "off").empty());
    CHECK(deliveries(s, "o2", "other").empty());

    queued_job(s, "job2", "o1");
    REQUIRE(s.cancel_batch_job("o1", "job2", 800).has_value());
    queued_job(s, "job3", "o1");
    REQUIRE(s.claim_batch_job("me", 30, 900).has_value());
    REQUIRE(s.finish_batch_job("job3", "me", batch::job_status::failed, 950));
    got = deliveries(s, "o1", "all");
    REQUIRE(got.size() == 3);
    CHECK(got[0].event == wh::event_type::batch_failed);
    CHECK(got[0].subject_id == "job3");
    CHECK(got[1].event == wh::event_type::batch_cancelled);
    CHECK(got[1].subject_id == "job2");
    std::set<std::string> ids{got[0].id, got[1].id, got[2].id};
    CHECK(ids.size() == 3);
    // Cancelling again changes nothing and queues nothing.
    CHECK(s.cancel_batch_job("o1", "job2", 990).error_value().code ==
          errc::conflict);
    CHECK(deliveries(s, "o1", "all").size() == 3);
  }

  TEST_CASE_TEMPLATE("revoking an active key queues key.revoked once", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com");
    REQUIRE(s.insert_webhook(
        make_endpoint("w", "o1", {wh::event_type::key_revoked})));
    REQUIRE(s.insert_api_key(make_key("key_1", "o1")));
    api_key_update rename;
    rename.name = "renamed";
    REQUIRE(s.update_api_key("o1", "key_1", rename, 2100));
    CHECK(deliveries(s, "o1", "w").empty());
    api_key_update revoke;
    revoke.status = acc::key_status::revoked;
    REQUIRE(s.update_api_key("o1", "key_1", revoke, 2200));
    REQUIRE(s.update_api_key("o1", "key_1", revoke, 2300)); // already revoked
    api_key_update reactivate;
    reactivate.status = acc::key_status::active;
    REQUIRE(s.update_api_key("o1", "key_1", reactivate, 2400));
    auto got = deliveries(s, "o1", "w");
    REQUIRE(got.size() == 1);
    CHECK(got[0].event == wh::event_type::key_revoked);
    CHECK(got[0].subject_id == "key_1");
    CHECK(got[0].created_ms == 2200000);
  }

  TEST_CASE_TEMPLATE("a debit that crosses an endpoint's threshold queues "
                     "credits.low with the balance",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com", 12);
    REQUIRE(s.insert_webhook(
        make_endpoint("w10", "o1", {wh::event_type::credits_low}, 10)));
    REQUIRE(s.insert_webhook(
        make_endpoint("w5", "o1", {wh::event_type::credits_low}, 5)));
    // Subscribed to something else: its threshold does not matter.
    REQUIRE(s.insert_webhook(
        make_endpoint("wk", "o1", {wh::event_type::key_revoked}, 100)));
    REQUIRE(s.take_credits("o1", 2, "smtp_check", "a", true, 10)); // 12 -> 10
    CHECK(deliveries(s, "o1", "w10").empty());
    REQUIRE(s.take_credits("o1", 1, "smtp_check", "b", true, 11)); // 10 -> 9
    auto got = deliveries(s, "o1", "w10");
    REQUIRE(got.size() == 1);
    CHECK(got[0].event == wh::event_type::credits_low);
    CHECK(got[0].balance == 9);
    CHECK(got[0].threshold == 10);
    REQUIRE(s.take_credits("o1", 1, "smtp_check", "c", true, 12)); // 9 -> 8
    CHECK(deliveries(s, "o1", "w10").size() == 1);
    // Refused debits change nothing.
    CHECK(s.take_credits("o1", 100, "batch_reserve", "j", false, 13)
              .error_value()
              .code == errc::insufficient_credits);
    CHECK(deliveries(s, "o1", "w5").empty());
    // Up again, then down across both thresholds at once.
    REQUIRE(s.add_credits("o1", 10, "grant", "x", 14)); // 8 -> 18
    REQUIRE(s.take_credits("o1", 16, "batch_reserve", "j", false, 15)); // 2
    CHECK(deliveries(s, "o1", "w10").size() == 2);
    auto five = deliveries(s, "o1", "w5");
    REQUIRE(five.size() == 1);
    CHECK(five[0].balance == 2);
    CHECK(five[0].threshold == 5);
    CHECK(deliveries(s, "o1", "wk").empty());
  }

  TEST_CASE_TEMPLATE("claims take due deliveries of active endpoints, lease "
                     "them, and record attempts until one succeeds",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    org_with_endpoint(s, "w");
    auto ping = s.enqueue_webhook_ping("o1", "w", 1000, {});
    REQUIRE_MESSAGE(ping.has_value(), why(ping));
    CHECK(ping->event == wh::event_type::ping);
    CHECK(ping->subject_id == "w");
    CHECK(s.enqueue_webhook_ping("o2", "w", 1000, {}).error_value().code ==
          errc::not_found);

    CHECK(s.claim_webhook_deliveries("p1", 10, 5000, 999)->empty()); // not due
    auto c = s.claim_webhook_deliveries("p1", 10, 5000, 1000);
    REQUIRE(c.has_value());
    REQUIRE(c->size() == 1);
    CHECK((*c)[0].delivery.id == ping->id);
    CHECK((*c)[0].endpoint.url == "https://hooks.example.com/w");
    CHECK((*c)[0].endpoint.sealed_secret == "x1.sealed-w");
    // Leased: nobody else gets it until the lease runs out.
    CHECK(s.claim_webhook_deliveries("p2", 10, 5000, 2000)->empty());

    // A failure: pending again, due later, with its attempt.
    wh::attempt a{0, 1000, 35, 500, ""};
    delivery_outcome retry{wh::delivery_status::pending, 3000, 0};
    CHECK(applied(s.record_webhook_attempt(ping->id, "p2", a, retry)) == false);
    REQUIRE(applied(s.record_webhook_attempt(ping->id, "p1", a, retry)) ==
            true);
    CHECK(s.claim_webhook_deliveries("p2", 10, 5000, 2999)->empty());
    c = s.claim_webhook_deliveries("p2", 10, 5000, 3000);
    REQUIRE(c->size() == 1);
    wh::attempt b{0, 3000, 20, 0, "connection refused"};
    REQUIRE(applied(s.record_webhook_attempt(
        ping->id, "p2", b, {wh::delivery_status::pending, 4000, 0})));
    // The holder of an expired lease died: another process takes over.
    REQUIRE(s.claim_webhook_deliveries("p3", 10, 500, 4000)->size() == 1);
    CHECK(s.claim_webhook_deliveries("p4", 10, 500, 4400)->empty());
    REQUIRE(s.claim_webhook_deliveries("p4", 10, 500, 4501)->size() == 1);
    CHECK(applied(s.record_webhook_attempt(ping->id, "p3", a, retry)) == false);
    wh::attempt ok{0, 4501, 12, 204, ""};
    REQUIRE(applied(s.record_webhook_attempt(
        ping->id, "p4", ok, {wh::delivery_status::delivered, 0, 4513})));
    // Delivered: never claimed or recorded again.
    CHECK(s.claim_webhook_deliveries("p5", 10, 500, 999999)->empty());
    CHECK(applied(s.record_webhook_attempt(
              ping->id, "p4", ok, {wh::delivery_status::delivered, 0, 5000})) ==
          false);

    auto got = deliveries(s, "o1", "w");
    REQUIRE(got.size() == 1);
    auto& d = got[0];
    CHECK(d.status == wh::delivery_status::delivered);
    CHECK(d.attempts == 3);
    CHECK(d.delivered_ms == 4513);
    CHECK(d.last_status_code == 204);
    REQUIRE(d.log.size() == 3);
    CHECK(d.log[0].number == 1);
    CHECK(d.log[0].status_code == 500);
    CHECK(d.log[0].duration_ms == 35);
    CHECK(d.log[1].number == 2);
    CHECK(d.log[1].status_code == 0);
    CHECK(d.log[1].error == "connection refused");
    CHECK(d.log[2].number == 3);
    CHECK(d.log[2].status_code == 204);
    CHECK(t.query_int("SELECT COUNT(*) FROM webhook_attempts WHERE "
                      "status_code >= 200 AND status_code <= 299") == 1);
  }

  TEST_CASE_TEMPLATE("a give-up without an attempt, disabled endpoints, "
                     "released leases and pruning",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    org_with_endpoint(s, "w");
    auto p1 = s.enqueue_webhook_ping("o1", "w", 1000, {});
    auto p2 = s.enqueue_webhook_ping("o1", "w", 1001, {});
    REQUIRE(p1);
    REQUIRE(p2);
    webhook_update off;
    off.status = wh::endpoint_status::disabled;
    REQUIRE(s.update_webhook("o1", "w", off, 5));
    CHECK(s.claim_webhook_deliveries("p", 10, 500, 2000)->empty());
    webhook_update on;
    on.status = wh::endpoint_status::active;
    REQUIRE(s.update_webhook("o1", "w", on, 6));
    auto c = s.claim_webhook_deliveries("p", 1, 500, 2000); // oldest first
    REQUIRE(c->size() == 1);
    CHECK((*c)[0].delivery.id == p1->id);
    REQUIRE(applied(s.record_webhook_attempt(
        p1->id, "p", std::nullopt, {wh::delivery_status::failed, 0, 0})));
    REQUIRE(s.claim_webhook_deliveries("p", 10, 500000, 2000)->size() == 1);
    REQUIRE(s.release_webhook_leases("p"));
    REQUIRE(s.claim_webhook_deliveries("q", 10, 500, 2001)->size() == 1);
    REQUIRE(applied(
        s.record_webhook_attempt(p2->id, "q", wh::attempt{0, 2001, 1, 200, ""},
                                 {wh::delivery_status::delivered, 0, 2002})));
    auto got = deliveries(s, "o1", "w");
    REQUIRE(got.size() == 2);
    CHECK(got[1].status == wh::delivery_status::failed);
    CHECK(got[1].attempts == 0);
    CHECK(got[1].last_error == "retry window passed");
    CHECK(got[1].log.empty());
    auto q = s.enqueue_webhook_ping("o1", "w", 3000, {}); // stays: pending
    REQUIRE(q);
    CHECK(pruned(s.prune_webhook_deliveries(1001)) == 1);
    CHECK(pruned(s.prune_webhook_deliveries(99999)) == 1);
    got = deliveries(s, "o1", "w");
    REQUIRE(got.size() == 1);
    CHECK(got[0].id == q->id);
    // Deleting the endpoint takes its deliveries.
    REQUIRE(s.delete_webhook("o1", "w"));
    CHECK(t.query_int("SELECT COUNT(*) FROM webhook_deliveries") == 0);
  }

  TEST_CASE_TEMPLATE("two processes never claim the same delivery", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    org_with_endpoint(s, "w");
    const int n = 60;
    for (int i = 0; i < n; ++i)
      REQUIRE(s.enqueue_webhook_ping("o1", "w", 1000 + i, {}));
    auto other = t.open_another();
    std::vector<std::string> mine, theirs;
    std::thread a([&] {
      for (int i = 0; i < 30; ++i)
        if (auto c = s.claim_webhook_deliveries("a", 3, 60000, 5000))
          for (auto& d : *c)
            mine.push_back(d.delivery.id);
    });
    std::thread b([&] {
      for (int i = 0; i < 30; ++i)
        if (auto c = other->claim_webhook_deliveries("b", 3, 60000, 5000))
          for (auto& d : *c)
            theirs.push_back(d.delivery.id);
    });
    a.join();
    b.join();
    std::set<std::string> all(mine.begin(), mine.end());
    all.insert(theirs.begin(), theirs.end());
    CHECK(all.size() == mine.size() + theirs.size());
    CHECK(all.size() == static_cast<std::size_t>(n));
  }

  TEST_CASE_TEMPLATE("a job failed by its claim queues batch.failed in that "
                     "transaction",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    org_with_endpoint(s, "all");
    queued_job(s, "job1", "o1");
    REQUIRE(s.claim_batch_job("a", 30, 600, 2).value().has_value());
    // a died; b takes over (restart 1), dies too.
    auto b = s.claim_batch_job("b", 30, 700, 2);
    REQUIRE(b.has_value());
    REQUIRE(b->has_value());
    CHECK((*b)->status == batch::job_status::processing);
    CHECK(deliveries(s, "o1", "all").empty());
    auto c = s.claim_batch_job("c", 30, 800, 2);
    REQUIRE(c.has_value());
    REQUIRE(c->has_value());
    CHECK((*c)->status == batch::job_status::failed);
    auto got = deliveries(s, "o1", "all");
    REQUIRE(got.size() == 1);
    CHECK(got[0].event == wh::event_type::batch_failed);
    CHECK(got[0].subject_id == "job1");
    CHECK(got[0].created_ms == 800000);
    CHECK(got[0].status == wh::delivery_status::pending);
    // Nothing left to claim, and nothing queued twice.
    CHECK_FALSE(s.claim_batch_job("d", 30, 900, 2).value().has_value());
    CHECK(deliveries(s, "o1", "all").size() == 1);
  }

  TEST_CASE_TEMPLATE("a ping is refused past the endpoint's and the "
                     "organization's windows and the pending cap",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    org_with_endpoint(s, "w");
    REQUIRE(s.insert_webhook(make_endpoint("w2", "o1", all_events)));
    wh::ping_limits limits{2, 3, 10000, 0};
    REQUIRE(s.enqueue_webhook_ping("o1", "w", 1000, limits));
    REQUIRE(s.enqueue_webhook_ping("o1", "w", 2000, limits));
    auto third = s.enqueue_webhook_ping("o1", "w", 3000, limits);
    REQUIRE_FALSE(third);
    CHECK(third.error_value().code == errc::rate_limited);
    CHECK(third.error_value().retry_after == 8); // 1000 + 10000 - 3000
    REQUIRE(s.enqueue_webhook_ping("o1", "w2", 3000, limits));
    auto org = s.enqueue_webhook_ping("o1", "w2", 3500, limits);
    REQUIRE_FALSE(org);
    CHECK(org.error_value().code == errc::rate_limited);
    // The oldest leaves the window: one more fits.
    CHECK(s.enqueue_webhook_ping("o1", "w", 11001, limits));
    CHECK(deliveries(s, "o1", "w").size() == 3);
    // Four pending: a cap of 4 refuses, a cap of 5 does not.
    CHECK_FALSE(s.enqueue_webhook_ping("o1", "w2", 50000, {0, 0, 10000, 4}));
    CHECK(s.enqueue_webhook_ping("o1", "w2", 50000, {0, 0, 10000, 5}));
  }

  TEST_CASE_TEMPLATE("due organizations come oldest first and a claim can "
                     "take one organization's deliveries",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    org_with_endpoint(s, "w");
    create_org(s, "o2", "b@example.com");
    REQUIRE(s.insert_webhook(make_endpoint("v", "o2", all_events)));
    REQUIRE(s.enqueue_webhook_ping("o2", "v", 1000, {}));
    REQUIRE(s.enqueue_webhook_ping("o1", "w", 1500, {}));
    REQUIRE(s.enqueue_webhook_ping("o1", "w", 1600, {}));
    CHECK(s.due_webhook_organizations(999, 10)->empty());
    CHECK(*s.due_webhook_organizations(2000, 10) ==
          std::vector<std::string>{"o2", "o1"});
    CHECK(*s.due_webhook_organizations(1200, 10) ==
          std::vector<std::string>{"o2"});
    auto c = s.claim_organization_webhook_deliveries("p", "o1", 1, 5000, 2000);
    REQUIRE(c);
    REQUIRE(c->size() == 1);
    CHECK(c->at(0).delivery.organization_id == "o1");
    CHECK(c->at(0).delivery.created_ms == 1500);
    c = s.claim_organization_webhook_deliveries("p", "o1", 5, 5000, 2000);
    REQUIRE(c->size() == 1);
    CHECK(s.claim_organization_webhook_deliveries("p", "o1", 5, 5000, 2000)
              ->empty());
    // o2's is still there for whoever claims it.
    CHECK(*s.due_webhook_organizations(2000, 10) ==
          std::vector<std::string>{"o2"});
    CHECK(s.claim_webhook_deliveries("q", 5, 5000, 2000)->size() == 1);
  }
}
