#include "tests/http/smtp_service.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::smtp_rcpt_behaviour;
using mailassay::tests::peers::smtp_rcpt_rule;

namespace {

// Every MX of the zone is the SMTP peer on 127.0.0.1; the service may reach
// loopback only because the tests allow 127.0.0.0/8.
constexpr const char* zone = R"(
mx.peer.test A 127.0.0.1
smtp.test MX 10 mx.peer.test
catchall.test MX 10 mx.peer.test
grey.test MX 10 mx.peer.test
nomail.test SOA 60 60
mx.tarpit.test A 127.0.0.31
tarpit.test MX 10 mx.tarpit.test
mx.slow.test A 127.0.0.32
slow.test MX 10 mx.slow.test
mx.refused.test A 127.0.0.33
refused.test MX 10 mx.refused.test
mx.tempfail.test A 127.0.0.34
tempfail.test MX 10 mx.tempfail.test
mx.busy.test A 127.0.0.35
busy.test MX 10 mx.busy.test
)";

struct smtp_env : smtp_service {
  explicit smtp_env(std::map<std::string, std::string> extra = {}) {
    mx.add_rule("*@catchall.test", smtp_rcpt_behaviour::accept);
    mx.add_rule("gone@*", smtp_rcpt_behaviour::no_such_user);
    mx.add_rule("full@*", smtp_rcpt_behaviour::mailbox_full);
    smtp_rcpt_rule grey{"*@grey.test", smtp_rcpt_behaviour::greylist,
                        std::chrono::milliseconds(400), ""};
    mx.add_rule(grey);
    mx.add_rule("ann*", smtp_rcpt_behaviour::accept);
    // A server that answers in Latin-1, as many still do.
    mx.add_rule(smtp_rcpt_rule{"latin@*", smtp_rcpt_behaviour::custom,
                               std::chrono::milliseconds(0),
                               "550 5.1.1 Benutzer unbekannt: M\xFCller"});
    // Unknown users at smtp.test are refused, so it is not a catch-all.
    mx.add_rule("*@smtp.test", smtp_rcpt_behaviour::no_such_user);
    // Fast retries and no host limits: the tests stay quick.
    start(zone,
          {{"MAILASSAY_SMTP_RETRY_DELAYS_MS", "600,1200"},
           {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
           {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "0"},
           {"MAILASSAY_SMTP_TLS", "never"}},
          extra, "S");
  }

  http_response validate(const std::string& email, int timeout_ms = 10000) {
    return a->post("/v2/email/validate",
                   {{"email", email}, {"smtp", true}, {"timeout", timeout_ms}},
                   key);
  }

  std::int64_t balance() {
    auto r = a->call("GET", "/v2/credits/balance", jwt);
    return json::parse(r.body)["balance"].get<std::int64_t>();
  }
};

} // namespace

TEST_SUITE("api.smtp") {
  TEST_CASE(
      "each SMTP answer yields its status, and a reached server costs one "
      "credit") {
    smtp_env env;
    struct row {
      const char* email;
      const char* status;
      const char* reason;
      bool deliverable;
    };
    for (auto r : {row{"ann@smtp.test", "valid", "accepted_email", true},
                   row{"gone@smtp.test", "invalid", "rejected_email", false}}) {
      std::string email = r.email;
      CAPTURE(email);
      auto before = env.balance();
      auto res = env.validate(r.email);
      REQUIRE_MESSAGE(res.status == 200, res.body);
      auto b = json::parse(res.body);
      CHECK(b["status"] == r.status);
      CHECK_MESSAGE(b["reason"] == r.reason, res.body);
      CHECK(b["smtp"]["checked"] == true);
      CHECK(b["smtp"]["deliverable"] == r.deliverable);
      CHECK(b["smtp"]["host"] == "mx.peer.test");
      CHECK(b["smtp"]["catchAll"] == false);
      CHECK(b["creditsUsed"] == 1);
      CHECK(env.balance() == before - 1);
    }
    auto full = json::parse(env.validate("full@smtp.test").body);
    CHECK(full["smtp"]["fullInbox"] == true);
    CHECK(full["smtp"]["enhancedCode"] == "5.2.2");
  }

  TEST_CASE("a reply that is not UTF-8 is answered with U+FFFD in its place") {
    smtp_env env;
    auto res = env.validate("latin@smtp.test");
    REQUIRE_MESSAGE(res.status == 200, res.body);
    auto b = json::parse(res.body);
    CHECK(b["status"] == "invalid");
    CHECK(b["smtp"]["code"] == 550);
    auto message = b["smtp"]["message"].get<std::string>();
    CHECK_MESSAGE(message.find("Benutzer unbekannt: M\xEF\xBF\xBDller") !=
                      std::string::npos,
                  message);
    // The service is still there.
    CHECK(env.validate("ann@smtp.test").status == 200);
  }

  TEST_CASE("a catch-all domain is risky with catchAll true") {
    smtp_env env;
    auto b = json::parse(env.validate("ann@catchall.test").body);
    CHECK(b["status"] == "risky");
    CHECK(b["smtp"]["catchAll"] == true);
  }

  TEST_CASE("a greylisting server that accepts the retry yields valid, and "
            "says it greylisted") {
    smtp_env env;
    auto before = env.balance();
    auto res = env.validate("ann@grey.test", 10000);
    REQUIRE(res.status == 200);
    auto b = json::parse(res.body);
    CHECK_MESSAGE(b["status"] == "valid", res.body);
    CHECK(b["smtp"]["checked"] == true);
    CHECK(b["smtp"]["deliverable"] == true);
    // A pass met greylisting, although a later pass decided.
    CHECK(b["smtp"]["greylisted"] == true);
    CHECK(b["smtp"]["attempts"].get<int>() >= 2);
    CHECK(b["creditsUsed"] == 1);
    CHECK(env.balance() == before - 1);
  }

  TEST_CASE("a probe that reaches no server in time is unknown, unchecked and "
            "free") {
    smtp_env env;
    // Accepts connections and never greets.
    mailassay::tests::peers::smtp_peer_options o;
    o.address = "127.0.0.31";
    o.port = env.mx.port();
    o.greeting = mailassay::tests::peers::smtp_greeting::tarpit;
    smtp_peer tarpit{o};
    auto before = env.balance();
    auto res = env.validate("ann@tarpit.test", 1000);
    REQUIRE_MESSAGE(res.status == 200, res.body);
    auto b = json::parse(res.body);
    CHECK(b["status"] == "unknown");
    CHECK(b["reason"] == "timeout");
    CHECK(b["smtp"]["checked"] == false);
    CHECK(b["smtp"]["deliverable"].is_null());
    CHECK(b["smtp"]["attempts"] == 0);
    CHECK(b["creditsUsed"] == 0);
    CHECK(env.balance() == before);
    CHECK(tarpit.connections() >= 1);
    CHECK(b["smtp"]["failure"] == "timeout");
  }

  TEST_CASE("an answer that blames our side names the failure and stays "
            "unknown") {
    smtp_env env;
    // A domain of its own: the fixture's rules for smtp.test come first.
    env.dns.load_zone("ours.test MX 10 mx.peer.test\n");
    env.mx.add_rule("blocked@*", smtp_rcpt_behaviour::policy_block);
    env.mx.add_rule(smtp_rcpt_rule{
        "rate@*", smtp_rcpt_behaviour::custom, std::chrono::milliseconds(0),
        "450 4.7.1 Too many connections from your IP, slow down"});
    env.mx.add_rule(smtp_rcpt_rule{"grey@*", smtp_rcpt_behaviour::custom,
                                   std::chrono::milliseconds(0),
                                   "450 4.2.0 Greylisted, try again later"});
    struct row {
      const char* email;
      const char* failure;
    };
    // refused.test: nothing listens on 127.0.0.33.
    for (auto r : {row{"blocked@ours.test", "policy_refused"},
                   row{"rate@ours.test", "rate_limited"},
                   row{"grey@ours.test", "tempfail"},
                   row{"ann@refused.test", "connect_failed"}}) {
      std::string email = r.email;
      CAPTURE(email);
      auto res = env.validate(r.email, 1500);
      REQUIRE_MESSAGE(res.status == 200, res.body);
      auto b = json::parse(res.body);
      CHECK(b["status"] == "unknown");
      CHECK_MESSAGE(b["smtp"]["failure"] == r.failure, res.body);
      CHECK(b["smtp"]["deliverable"].is_null());
    }
    auto ok = json::parse(env.validate("ann@smtp.test").body);
    CHECK(ok["smtp"]["failure"].is_null());
    auto gone = json::parse(env.validate("gone@smtp.test").body);
    CHECK(gone["smtp"]["failure"].is_null());
  }

  TEST_CASE("tarpit, slow, refused and temp-failing hosts end within the "
            "request's timeout and never hold up another domain") {
    // Politeness as shipped (4 sessions, 2 connections/s per MX host).
    smtp_env env{{{"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "2"},
                  {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "4"},
                  {"MAILASSAY_CREDITS_SIGNUP_GRANT", "100000"}}};
    using mailassay::tests::peers::smtp_greeting;
    using mailassay::tests::peers::smtp_peer_options;
    auto peer_on = [&](const char* address) {
      smtp_peer_options o;
      o.address = address;
      o.port = env.mx.port();
      return o;
    };
    auto tarpit_o = peer_on("127.0.0.31");
    tarpit_o.greeting = smtp_greeting::tarpit;
    smtp_peer tarpit{tarpit_o};
    // Slower than the whole budget: each reply takes 1.5 s.
    auto slow_o = peer_on("127.0.0.32");
    slow_o.reply_delay = std::chrono::milliseconds(1500);
    smtp_peer slow{slow_o};
    // 127.0.0.33: nothing listens, the connection is refused.
    auto temp_o = peer_on("127.0.0.34");
    smtp_peer tempfail{temp_o};
    tempfail.set_default({"*", smtp_rcpt_behaviour::greylist,
                          std::chrono::milliseconds(600000), ""});
    auto busy_o = peer_on("127.0.0.35");
    busy_o.greeting = smtp_greeting::busy;
    smtp_peer busy{busy_o};
    constexpr int timeout_ms = 2500;
    struct outcome {
      std::string email;
      int status = 0;
      json body;
      double ms = 0;
    };
    auto validate_timed = [&](const std::string& email) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = env.validate(email, timeout_ms);
      outcome o{email, r.status, json{}, 0};
      o.ms = std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - t0)
                 .count();
      if (r.status == 200)
        o.body = json::parse(r.body);
      return o;
    };
    // Several requests at each bad domain at once, and meanwhile a steady
    // stream at a good one.
    std::vector<std::string> bad;
    for (auto d : {"tarpit.test", "slow.test", "refused.test", "tempfail.test",
                   "busy.test"})
      for (int i = 0; i < 6; ++i)
        bad.push_back("ann" + std::to_string(i) + "@" + d);
    std::vector<outcome> bad_out(bad.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < bad.size(); ++i)
      threads.emplace_back([&, i] { bad_out[i] = validate_timed(bad[i]); });
    std::vector<outcome> good_out;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (int i = 0; std::chrono::steady_clock::now() < until; ++i)
      good_out.push_back(
          validate_timed("ann" + std::to_string(i) + "@catchall.test"));
    for (auto& t : threads)
      t.join();
    REQUIRE(good_out.size() >= 3);
    for (const auto& o : good_out) {
      CAPTURE(o.email);
      REQUIRE(o.status == 200);
      CHECK(o.body["smtp"]["checked"] == true);
      // Answered at once, not after the bad domains' time-outs.
      CHECK(o.ms < 1500);
    }
    for (const auto& o : bad_out) {
      CAPTURE(o.email);
      REQUIRE_MESSAGE(o.status == 200, o.email);
      CHECK(o.body["status"] == "unknown");
      // Within the request's own time-out (and the HTTP round trip).
      CHECK(o.ms < timeout_ms + 1000);
      CHECK(o.body["creditsUsed"] ==
            (o.body["smtp"]["checked"] == true ? 1 : 0));
    }
    // Nothing answered for a tarpit, a refused port or a busy greeting:
    // unchecked and free; the temp-failing one answered 450: checked,
    // greylisted.
    for (std::size_t i = 0; i < bad.size(); ++i) {
      CAPTURE(bad[i]);
      const auto& b = bad_out[i].body;
      if (bad[i].find("tempfail") != std::string::npos) {
        CHECK(b["smtp"]["checked"] == true);
        CHECK(b["smtp"]["greylisted"] == true);
      } else if (bad[i].find("slow") == std::string::npos) {
        CHECK(b["smtp"]["checked"] == false);
        CHECK(b["creditsUsed"] == 0);
      }
    }
  }

  TEST_CASE("no probe and no charge when there is nothing to probe, and 403 "
            "for a key without SMTP") {
    smtp_env env;
    auto before = env.balance();
    auto b = json::parse(env.validate("ann@nomail.test").body);
    CHECK(b["smtp"]["checked"] == false);
    CHECK(b["creditsUsed"] == 0);
    CHECK(env.balance() == before);
    auto plain = env.a->create_key(env.jwt)["key"].get<std::string>();
    auto r = env.a->post("/v2/email/validate",
                         {{"email", "ann@smtp.test"}, {"smtp", true}}, plain);
    CHECK(r.status == 403);
    CHECK(env.mx.connections() == 0);
  }

  TEST_CASE("a loopback MX is never connected to without the allow-list, and "
            "the credit is refunded") {
    smtp_env env{{{"MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS", ""}}};
    auto before = env.balance();
    auto res = env.validate("ann@smtp.test");
    REQUIRE(res.status == 200);
    auto b = json::parse(res.body);
    CHECK(b["status"] == "unknown");
    CHECK(b["reason"] == "unroutable_mx");
    CHECK(b["creditsUsed"] == 0);
    CHECK(env.mx.connections() == 0);
    CHECK(env.balance() == before);
  }

  TEST_CASE("the SMTP metrics move with a probe burst") {
    smtp_env env;
    mailassay::tests::peers::smtp_peer_options o;
    o.address = "127.0.0.31";
    o.port = env.mx.port();
    o.greeting = mailassay::tests::peers::smtp_greeting::tarpit;
    smtp_peer tarpit{o};
    std::map<std::string, double> before;
    auto names = {
        "mailassay_smtp_probes",
        "mailassay_smtp_sessions",
        "mailassay_smtp_answers{class=\"accepted\"}",
        "mailassay_smtp_answers{class=\"rejected\"}",
        "mailassay_smtp_answers{class=\"timeout\"}",
        "mailassay_smtp_retries",
        "mailassay_smtp_credits{outcome=\"charged\"}",
        "mailassay_smtp_credits{outcome=\"refunded\"}",
        "mailassay_smtp_result_cache_hits",
        "mailassay_smtp_catch_all_probes",
        "mailassay_smtp_rcpts_per_session_count",
        "mailassay_smtp_rcpts_per_session_sum",
    };
    for (auto* n : names)
      before[n] = env.a->metric(n);
    auto delta = [&](const std::string& n) {
      return env.a->metric(n) - before.at(n);
    };
    // A burst at smtp.test: 8 accepted, 4 unknown users, at once.
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < 12; ++i)
      threads.emplace_back([&, i] {
        auto email =
            (i < 8 ? "ann" : "gone") + std::to_string(i) + "@smtp.test";
        if (env.validate(email).status == 200)
          ++ok;
      });
    for (auto& t : threads)
      t.join();
    REQUIRE(ok == 12);
    // The same address again: from the result cache.
    REQUIRE(env.validate("ann0@smtp.test").status == 200);
    // Greylisted, then accepted: one re-check scheduled.
    REQUIRE(env.validate("ann@grey.test", 10000).status == 200);
    // Nothing answers: a time-out, its credit refunded.
    REQUIRE(env.validate("ann@tarpit.test", 1000).status == 200);
    CHECK(delta("mailassay_smtp_probes") == 15);
    CHECK(delta("mailassay_smtp_answers{class=\"accepted\"}") == 10);
    CHECK(delta("mailassay_smtp_answers{class=\"rejected\"}") == 4);
    CHECK(delta("mailassay_smtp_answers{class=\"timeout\"}") == 1);
    CHECK(delta("mailassay_smtp_result_cache_hits") == 1);
    CHECK(delta("mailassay_smtp_retries") >= 1);
    CHECK(delta("mailassay_smtp_catch_all_probes") >= 1);
    CHECK(delta("mailassay_smtp_credits{outcome=\"charged\"}") == 14);
    CHECK(delta("mailassay_smtp_credits{outcome=\"refunded\"}") == 1);
    CHECK(delta("mailassay_smtp_sessions") >= 3);
    // Per MX host, only the hosts in use.
    CHECK(
        env.a->metric(
            "mailassay_smtp_host_connections_opened{host=\"mx.peer.test\"}") >=
        2);
    auto text = env.a->call("GET", "/metrics").body;
    CHECK(text.find("# TYPE mailassay_smtp_rcpts_per_session histogram") !=
          std::string::npos);
    CHECK(text.find(
              "mailassay_smtp_host_sessions_peak{host=\"mx.tarpit.test\"}") !=
          std::string::npos);
    // Sessions end a moment after their last answer (linger): the
    // histogram counts them once they have.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (env.a->metric(
               "mailassay_smtp_host_sessions_open{host=\"mx.peer.test\"}") >
               0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(delta("mailassay_smtp_rcpts_per_session_count") >= 2);
    // 14 addresses at mx.peer.test, the catch-all probes and the retry.
    CHECK(delta("mailassay_smtp_rcpts_per_session_sum") >= 14);
  }

  TEST_CASE("per-host series exist only for hosts in use: kept while a "
            "session is open, dropped once idle past the window, at most "
            "max_hosts") {
    smtp_env env{{{"MAILASSAY_SMTP_HOST_METRICS_IDLE_SECONDS", "1"},
                  {"MAILASSAY_SMTP_HOST_METRICS_MAX_HOSTS", "1"}}};
    mailassay::tests::peers::smtp_peer_options o;
    o.address = "127.0.0.31";
    o.port = env.mx.port();
    o.greeting = mailassay::tests::peers::smtp_greeting::tarpit;
    smtp_peer tarpit{o};
    const std::string held =
        "mailassay_smtp_host_sessions_open{host=\"mx.tarpit.test\"}";
    auto metrics = [&] { return env.a->call("GET", "/metrics").body; };
    auto wait_until = [&](auto done) {
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return done();
    };
    // A session the tarpit holds (it never greets) for the request's budget.
    std::atomic<bool> answered{false};
    std::thread slow{[&] {
      env.validate("ann@tarpit.test", 8000);
      answered = true;
    }};
    struct joiner {
      std::thread& t;
      ~joiner() { t.join(); }
    } join_slow{slow};
    REQUIRE(wait_until(
        [&] { return metrics().find(held + " 1\n") != std::string::npos; }));
    // The only place is held by a host with a session open: another host
    // in use meanwhile is left out, and counted as such.
    REQUIRE(env.validate("ann1@smtp.test").status == 200);
    auto text = metrics();
    CHECK(text.find("host=\"mx.peer.test\"") == std::string::npos);
    CHECK(env.a->metric("mailassay_smtp_hosts_untracked") >= 1);
    CHECK_FALSE(answered.load()); // the tarpit's session was open throughout
    CHECK(text.find(held + " 1\n") != std::string::npos);
    REQUIRE(wait_until([&] { return answered.load(); }));
    // Closed, then idle past the window (1 s): its series go.
    CHECK(wait_until([&] {
      return metrics().find("host=\"mx.tarpit.test\"") == std::string::npos;
    }));
  }

  TEST_CASE("1000 concurrent SMTP validations never spend more credits than "
            "the organization holds") {
    // The issue's figures: 1000 validations at once at one domain, 500
    // credits.
    smtp_env env{{{"MAILASSAY_CREDITS_SIGNUP_GRANT", "500"}}};
    constexpr int n = 1000, credits = 500;
    std::atomic<int> ok{0}, short_{0}, other{0}, charged{0}, ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
      threads.emplace_back([&, t] {
        ++ready;
        while (!go)
          std::this_thread::yield();
        auto r =
            env.validate("ann" + std::to_string(t) + "@catchall.test", 30000);
        if (r.status == 200) {
          ++ok;
          if (json::parse(r.body)["creditsUsed"] == 1)
            ++charged;
        } else if (r.status == 402) {
          ++short_;
          auto b = json::parse(r.body);
          if (b["code"] != "INSUFFICIENT_CREDITS" ||
              b["message"] != "Insufficient credits for SMTP validation")
            ++other;
        } else {
          ++other;
        }
      });
    while (ready < n)
      std::this_thread::yield();
    go = true;
    for (auto& th : threads)
      th.join();
    CHECK(ok == credits);
    CHECK(charged == credits);
    CHECK(short_ == n - credits);
    CHECK(other == 0);
    CHECK(env.balance() == 0);
    // The ledger, page by page: the grant and one entry per check sum to 0.
    std::int64_t sum = 0, entries = 0, checks = 0;
    std::string before;
    for (;;) {
      auto page = json::parse(
          env.a
              ->call("GET", "/v2/credits/transactions?limit=500" + before,
                     env.jwt)
              .body);
      for (auto& e : page["items"]) {
        sum += e["delta"].get<std::int64_t>();
        ++entries;
        if (e["kind"] == "smtp_check")
          ++checks;
      }
      if (page["nextBefore"].is_null())
        break;
      before =
          "&before=" + std::to_string(page["nextBefore"].get<std::int64_t>());
    }
    CHECK(sum == 0);
    CHECK(checks == credits);
    CHECK(entries >= credits + 1);
    // The ledger sums to the consumption the balance reports.
    auto bal =
        json::parse(env.a->call("GET", "/v2/credits/balance", env.jwt).body);
    CHECK(bal["consumed"] == credits);
  }

  TEST_CASE("an SMTP batch charges exactly one credit per address checked") {
    smtp_env env;
    std::string csv = "email\n";
    for (int i = 0; i < 20; ++i)
      csv += "ann" + std::to_string(i) + "@catchall.test\n";
    csv += "ann@nomail.test\n"; // no MX: not probed, refunded
    auto up = env.a->call(
        "POST", "/v2/batch/upload?smtp=true", "", csv,
        {{"Authorization", "Bearer " + env.key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job = json::parse(up.body);
    CHECK(job["creditsReserved"] == 21);
    CHECK(env.balance() == 100 - 21);
    auto id = job["id"].get<std::string>();
    json done;
    for (int i = 0; i < 300; ++i) {
      done = json::parse(env.a->call("GET", "/v2/batch/" + id, env.key).body);
      if (done["status"] == "completed")
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE_MESSAGE(done["status"] == "completed", done.dump());
    CHECK(done["creditsUsed"] == 20);
    CHECK(done["counts"]["risky"] == 20); // catch-all
    CHECK(env.balance() == 100 - 20);
    // Addresses at one domain share sessions: 20 RCPTs, not 20 connections.
    CHECK_MESSAGE(env.mx.connections() <= 3, env.mx.connections());
    CHECK(env.mx.commands("RCPT") >= 20);
  }
}
