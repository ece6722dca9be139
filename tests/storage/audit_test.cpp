// The audit log (docs/privacy.md): recorded, listed newest first with a
// cursor and a filter, failed logins folded into bursts, erased with the
// organization's retention and with the organization.
#include "support.hpp"

using namespace mailassay::storage;
using namespace mailassay::storage::testing;

namespace {

acc::audit_entry entry(const std::string& org, const std::string& action,
                       std::int64_t at, const std::string& target = "k1",
                       const std::string& ip = "192.0.2.1") {
  acc::audit_entry e;
  e.organization_id = org;
  e.at = at;
  e.action = action;
  e.actor_type = acc::audit_actor::user;
  e.actor_id = "u-" + org;
  e.target = target;
  e.ip = ip;
  e.details = R"({"name":"k"})";
  return e;
}

std::vector<acc::audit_entry> all(store& s, const std::string& org) {
  auto r = s.list_audit(org, 100, 0, std::nullopt);
  REQUIRE_MESSAGE(r.has_value(), why(r));
  return *r;
}

} // namespace

TEST_SUITE("storage.audit") {
  TEST_CASE_TEMPLATE("entries are listed newest first, by page and action, "
                     "per organization",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com");
    create_org(s, "o2", "b@example.com");
    REQUIRE(s.record_audit(entry("o1", "api_key.created", 100)));
    REQUIRE(s.record_audit(entry("o1", "api_key.revoked", 200)));
    REQUIRE(s.record_audit(entry("o1", "member.added", 300, "u9")));
    REQUIRE(s.record_audit(entry("o2", "api_key.created", 400)));
    auto got = all(s, "o1");
    REQUIRE(got.size() == 3);
    CHECK(got[0].action == "member.added");
    CHECK(got[1].action == "api_key.revoked");
    CHECK(got[2].action == "api_key.created");
    CHECK(got[2].actor_type == acc::audit_actor::user);
    CHECK(got[2].actor_id == "u-o1");
    CHECK(got[2].target == "k1");
    CHECK(got[2].ip == "192.0.2.1");
    CHECK(got[2].details == R"({"name":"k"})");
    CHECK(got[2].at == 100);
    CHECK(got[2].occurrences == 1);
    CHECK(got[0].id > got[1].id);
    auto page = s.list_audit("o1", 2, 0, std::nullopt);
    REQUIRE(page->size() == 2);
    auto next = s.list_audit("o1", 2, page->back().id, std::nullopt);
    REQUIRE(next->size() == 1);
    CHECK((*next)[0].action == "api_key.created");
    auto keys = s.list_audit("o1", 10, 0, std::string{"api_key.revoked"});
    REQUIRE(keys->size() == 1);
    CHECK((*keys)[0].at == 200);
    auto other = all(s, "o2");
    REQUIRE(other.size() == 1);
    CHECK(other[0].at == 400);
  }

  TEST_CASE_TEMPLATE("failed logins of one account and address fold into "
                     "one entry per window",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com");
    auto failed = [&](std::int64_t at, const std::string& ip) {
      REQUIRE(s.record_audit(entry("o1", "auth.login_failed", at, "u1", ip)));
    };
    for (int i = 0; i < 5; ++i)
      failed(1000 + i, "192.0.2.1");
    failed(1010, "192.0.2.2"); // another address: its own burst
    failed(1000 + acc::login_failure_window + 5, "192.0.2.1"); // a new window
    auto got = all(s, "o1");
    REQUIRE(got.size() == 3);
    CHECK(got[2].occurrences == 5);
    CHECK(got[2].at == 1004);
    CHECK(got[1].ip == "192.0.2.2");
    CHECK(got[1].occurrences == 1);
    CHECK(got[0].occurrences == 1);
  }

  TEST_CASE_TEMPLATE("entries follow the organization's retention and go "
                     "with the organization",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com");
    create_org(s, "o2", "b@example.com");
    REQUIRE(s.record_audit(entry("o1", "api_key.created", 100)));
    REQUIRE(s.record_audit(entry("o1", "api_key.revoked", 500)));
    REQUIRE(s.record_audit(entry("o2", "api_key.created", 100)));
    REQUIRE(s.erase_expired_batch_results("o1", 300, 1000, 10));
    auto kept = all(s, "o1");
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].action == "api_key.revoked");
    CHECK(all(s, "o2").size() == 1);
    REQUIRE(s.erase_organization("o1"));
    CHECK(t.query_int("SELECT COUNT(*) FROM audit_log WHERE organization_id "
                      "= 'o1'") == 0);
    CHECK(all(s, "o2").size() == 1);
  }
}
