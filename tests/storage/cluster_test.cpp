// What several processes sharing one database rely on (docs/deployment.md):
// one signing key, notifications sent inside the changing transaction, and
// leases on the database's clock.
#include "support.hpp"

#include "storage/notify.hpp"

#include <atomic>
#include <chrono>
#include <ctime>
#include <libpq-fe.h>
#include <poll.h>
#include <thread>
#include <vector>

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;
namespace batch = mailassay::core::batch;

namespace {

acc::signing_key candidate(std::string kid) {
  acc::signing_key k;
  k.kid = std::move(kid);
  // Appended: GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  k.secret = std::string{"secret-"}.append(k.kid);
  return k;
}

batch::job queued_job(const std::string& id, const std::string& org) {
  batch::job j;
  j.id = id;
  j.organization_id = org;
  j.file_name = "f.csv";
  j.email_column = "email";
  j.total_rows = j.unique_emails = 1;
  j.created_at = 1000;
  return j;
}

batch::item pending_item() {
  batch::item it;
  it.seq = 0;
  it.email = "a@example.com";
  return it;
}

// A raw libpq connection LISTENing on the database's channel, as another
// process would.
class listener {
public:
  explicit listener(const std::string& url, bool named = false) {
    auto u = parse_database_url(url);
    REQUIRE(u.has_value());
    // Named as a process's LISTEN connection is (app/serve.cpp): counted
    // by listening_processes.
    auto info = postgres_conninfo(*u);
    if (named)
      info += " application_name='" + listener_application_name(*u) + "'";
    conn_ = PQconnectdb(info.c_str());
    REQUIRE(PQstatus(conn_) == CONNECTION_OK);
    auto* r = PQexec(conn_, ("LISTEN \"" + notify_channel(*u) + "\"").c_str());
    REQUIRE(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);
  }
  ~listener() { PQfinish(conn_); }

  // Payloads received within `wait` (all that arrived by then).
  std::vector<std::string> take(std::chrono::milliseconds wait) {
    std::vector<std::string> out;
    auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
      PQconsumeInput(conn_);
      while (PGnotify* n = PQnotifies(conn_)) {
        out.emplace_back(n->extra);
        PQfreemem(n);
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !out.empty())
        return out;
      pollfd p{PQsocket(conn_), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    }
  }

private:
  PGconn* conn_ = nullptr;
};

} // namespace

TEST_SUITE("storage.cluster") {
  TEST_CASE_TEMPLATE("the first signing key stored is the deployment's",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    CHECK(s.signing_keys()->empty());
    auto first = s.ensure_signing_key(candidate("k1"));
    REQUIRE_MESSAGE(first.has_value(), why(first));
    REQUIRE(first->size() == 1);
    CHECK(first->front().kid == "k1");
    CHECK(first->front().secret == "secret-k1");
    CHECK(first->front().retired_at == 0);
    auto now = std::time(nullptr);
    CHECK(std::abs(first->front().created_at - now) <= 5);
    // Another process starting later keeps it.
    auto again = t.open_another()->ensure_signing_key(candidate("k2"));
    REQUIRE(again.has_value());
    REQUIRE(again->size() == 1);
    CHECK(again->front().kid == "k1");
  }

  TEST_CASE_TEMPLATE("processes starting together store one signing key",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    constexpr int n = 4;
    std::vector<std::unique_ptr<store>> stores;
    for (int i = 0; i < n; ++i)
      stores.push_back(t.open_another());
    std::vector<std::string> seen(n);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        ++ready;
        while (ready.load() < n)
          std::this_thread::yield();
        auto keys = stores[i]->ensure_signing_key(
            candidate(std::string{"k"}.append(std::to_string(i))));
        if (keys && keys->size() == 1)
          seen[i] = keys->front().kid;
      });
    for (auto& th : threads)
      th.join();
    CHECK_FALSE(seen[0].empty());
    for (auto& kid : seen)
      CHECK(kid == seen[0]);
    CHECK(t.query_int("SELECT COUNT(*) FROM signing_keys") == 1);
  }

  TEST_CASE_TEMPLATE("a rotation retires the signing key and drops old ones",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    REQUIRE(s.ensure_signing_key(candidate("k1")).has_value());
    auto rotated = s.rotate_signing_key(candidate("k2"), 3600);
    REQUIRE_MESSAGE(rotated.has_value(), why(rotated));
    REQUIRE(rotated->size() == 2);
    CHECK(rotated->at(0).kid == "k2");
    CHECK(rotated->at(0).retired_at == 0);
    CHECK(rotated->at(1).kid == "k1");
    auto now = std::time(nullptr);
    CHECK(std::abs(rotated->at(1).retired_at - now) <= 5);
    // Retired long ago: gone at the next rotation.
    t.query_int("UPDATE signing_keys SET retired_at = 1 WHERE kid = 'k1' "
                "RETURNING 1");
    auto next = s.rotate_signing_key(candidate("k3"), 3600);
    REQUIRE(next.has_value());
    REQUIRE(next->size() == 2);
    CHECK(next->at(0).kid == "k3");
    CHECK(next->at(1).kid == "k2");
    // Dropping the old keys leaves the new one alone.
    auto alone = s.rotate_signing_key(candidate("k4"), -1);
    REQUIRE(alone.has_value());
    REQUIRE(alone->size() == 1);
    CHECK(alone->front().kid == "k4");
    CHECK(s.signing_keys()->size() == 1);
  }

  TEST_CASE_TEMPLATE("the database clock is the server's", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    auto now = t.db().database_now();
    REQUIRE(now.has_value());
    // Same host in the tests: the clocks agree.
    CHECK(std::abs(*now - std::time(nullptr)) <= 5);
  }

  TEST_CASE_TEMPLATE("leases on the database clock ignore the hosts' clocks",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "o1@example.com");
    REQUIRE(s.create_batch_job(queued_job("j1", "o1"), {pending_item()})
                .has_value());
    auto claimed = s.claim_batch_job("a", 60, database_clock);
    REQUIRE(claimed.has_value());
    REQUIRE(claimed->has_value());
    auto db_now = *s.database_now();
    CHECK(std::abs((*claimed)->lease_expires_at - (db_now + 60)) <= 5);
    CHECK(std::abs(*(*claimed)->started_at - db_now) <= 5);
    // Another process on the database clock sees a live lease...
    auto other = t.open_another();
    auto none = other->claim_batch_job("b", 60, database_clock);
    REQUIRE(none.has_value());
    CHECK_FALSE(none->has_value());
    // ... where one trusting a host clock two minutes ahead takes it.
    auto skewed = other->claim_batch_job("b", 60, db_now + 120);
    REQUIRE(skewed.has_value());
    CHECK(skewed->has_value());
    // Renewals, checkpoints and the end read the database clock too.
    CHECK(*s.renew_batch_lease("j1", "b", 30, database_clock));
    auto renewed = s.get_batch_job("o1", "j1");
    CHECK(std::abs(renewed->lease_expires_at - (*s.database_now() + 30)) <= 5);
    batch::item done = pending_item();
    done.done = true;
    done.status = mailassay::core::validation::status::valid;
    REQUIRE(s.save_batch_results("j1", "b", {done}, 45, database_clock)
                .has_value());
    auto finished = s.finish_batch_job("j1", "b", batch::job_status::completed,
                                       database_clock);
    REQUIRE(finished.has_value());
    REQUIRE(finished->finished_at.has_value());
    CHECK(std::abs(*finished->finished_at - *s.database_now()) <= 5);
  }

  TEST_CASE("changes are notified when their transaction commits") {
    test_db t{dialect::postgresql};
    if (t.skipped())
      return;
    auto& s = t.db();
    auto org = create_org(s, "o1", "o1@example.com");
    REQUIRE(
        s.add_member("o1", make_user("u2", "u2@example.com"), acc::role::admin)
            .has_value());
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    listener other{t.url()};
    using namespace std::chrono_literals;

    api_key_update revoke;
    revoke.status = acc::key_status::revoked;
    REQUIRE(s.update_api_key("o1", "k1", revoke, 3000).has_value());
    CHECK(other.take(5s) == std::vector<std::string>{"k:hash-k1"});

    REQUIRE(s.update_member_role("o1", "u2", acc::role::member).has_value());
    CHECK(other.take(5s) == std::vector<std::string>{"m:u2"});
    REQUIRE(s.remove_member("o1", "u2").has_value());
    CHECK(other.take(5s) == std::vector<std::string>{"m:u2"});

    REQUIRE(s.create_batch_job(queued_job("j1", "o1"), {pending_item()})
                .has_value());
    REQUIRE(s.cancel_batch_job("o1", "j1", database_clock).has_value());
    CHECK(other.take(5s) == std::vector<std::string>{"b:j1"});

    REQUIRE(s.ensure_signing_key(candidate("s1")).has_value());
    REQUIRE(s.rotate_signing_key(candidate("s2"), 60).has_value());
    CHECK(other.take(5s) == std::vector<std::string>{"j:s2"});

    REQUIRE(s.delete_api_key("o1", "k1").has_value());
    CHECK(other.take(5s) == std::vector<std::string>{"k:hash-k1"});
  }

  TEST_CASE("a refused change notifies nobody") {
    test_db t{dialect::postgresql};
    if (t.skipped())
      return;
    auto& s = t.db();
    auto org = create_org(s, "o1", "o1@example.com");
    listener other{t.url()};
    using namespace std::chrono_literals;
    // The last owner stays: rolled back, nothing sent.
    CHECK(s.update_member_role("o1", org.owner.id, acc::role::member)
              .error_value()
              .code == errc::conflict);
    CHECK(s.remove_member("o1", org.owner.id).error_value().code ==
          errc::conflict);
    CHECK(s.delete_api_key("o1", "nope").error_value().code == errc::not_found);
    CHECK(other.take(300ms).empty());
  }

  TEST_CASE_TEMPLATE("the processes listening are counted, per schema",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    auto n = t.db().listening_processes();
    REQUIRE_MESSAGE(n.has_value(), why(n));
    CHECK(*n == 0);
    if (t.db().backend_name() != "postgresql")
      return;
    {
      listener a{t.url(), true}, b{t.url(), true};
      listener unnamed{t.url()}; // another client of the database
      CHECK(*t.db().listening_processes() == 2);
    }
    // A closed connection's backend leaves pg_stat_activity a moment later.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (*t.db().listening_processes() != 0 &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(*t.db().listening_processes() == 0);
  }

  TEST_CASE("acknowledgements round-trip; a change is not one") {
    auto a = decode_ack(encode_ack({"n1x", "k:hash:with:colons"}));
    REQUIRE(a.has_value());
    CHECK(a->node == "n1x");
    CHECK(a->payload == "k:hash:with:colons");
    CHECK_FALSE(decode_ack("k:hash").has_value());
    CHECK_FALSE(decode_ack("a::k:x").has_value());
    CHECK_FALSE(decode_ack("a:n1").has_value());
    CHECK_FALSE(decode_change(encode_ack({"n", "k:x"})).has_value());
  }

  TEST_CASE("schemas sharing a database have channels of their own") {
    auto a = parse_database_url("postgresql://u@h/db?schema=one");
    auto b = parse_database_url("postgresql://u@h/db?schema=two");
    auto plain = parse_database_url("postgresql://u@h/db");
    CHECK(notify_channel(*a) != notify_channel(*b));
    CHECK(notify_channel(*plain) == "mailassay_events");
  }

  TEST_CASE("payloads round-trip and unknown ones are ignored") {
    for (auto kind : {change_kind::api_key, change_kind::member,
                      change_kind::batch_cancel, change_kind::signing_key}) {
      auto back = decode_change(encode_change({kind, "id:with:colons"}));
      REQUIRE(back.has_value());
      CHECK(back->kind == kind);
      CHECK(back->id == "id:with:colons");
    }
    CHECK_FALSE(decode_change("").has_value());
    CHECK_FALSE(decode_change("k:").has_value());
    CHECK_FALSE(decode_change("x:1").has_value());
    CHECK_FALSE(decode_change("k1").has_value());
  }
}
