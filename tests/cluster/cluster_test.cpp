// Three processes as one service (issue 18, docs/deployment.md): tokens,
// signing keys, revocations, rate limits, batch cancels and catch-all
// verdicts behave as with one process.
#include "tests/cluster/cluster.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::smtp_rcpt_behaviour;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

double ms_since(steady::time_point t) {
  return std::chrono::duration<double, std::milli>(steady::now() - t).count();
}

// An organization signed up through node 0.
struct org {
  std::string jwt, refresh;
  explicit org(cluster& c) {
    auto s = c.at(0).signup("Cluster", unique_email("c"));
    jwt = s["accessToken"].get<std::string>();
    refresh = s["refreshToken"].get<std::string>();
  }
};

// The `kid` in a token's header ("" when none).
std::string kid_of(const std::string& token) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string header;
  unsigned acc = 0;
  int bits = 0;
  for (char ch : token.substr(0, token.find('.'))) {
    acc = (acc << 6) | static_cast<unsigned>(alphabet.find(ch));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      header += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return json::parse(header).value("kid", "");
}

} // namespace

TEST_SUITE("cluster") {
  TEST_CASE("a token issued by one process works on the others, and a "
            "refresh on another rotates the same family") {
    MAILASSAY_CLUSTER(c);
    org o{c};
    for (int i = 0; i < 3; ++i) {
      auto me = c.at(i).call("GET", "/v2/auth/me", o.jwt);
      CHECK_MESSAGE(me.status == 200, "node " << i << ": " << me.body);
    }
    // Refreshed on node 1: the new access token works on node 2.
    auto r1 = c.at(1).post("/v2/auth/refresh", {{"refreshToken", o.refresh}});
    REQUIRE_MESSAGE(r1.status == 200, r1.body);
    auto pair = json::parse(r1.body);
    auto next_refresh = pair["refreshToken"].get<std::string>();
    CHECK(
        c.at(2)
            .call("GET", "/v2/auth/me", pair["accessToken"].get<std::string>())
            .status == 200);
    // The spent token replayed on node 2 revokes the family everywhere:
    // the token node 1 handed out is refused on node 0.
    CHECK(c.at(2)
              .post("/v2/auth/refresh", {{"refreshToken", o.refresh}})
              .status == 401);
    CHECK(c.at(0)
              .post("/v2/auth/refresh", {{"refreshToken", next_refresh}})
              .status == 401);
  }

  TEST_CASE("a rotated signing key reaches every process; tokens signed "
            "before stay valid, unless the old keys are dropped") {
    MAILASSAY_CLUSTER(c);
    org o{c};
    auto first_kid = kid_of(o.jwt);
    CHECK_FALSE(first_kid.empty());
    std::map<std::string, std::string> env{
        {"MAILASSAY_DATABASE_URL", c.database_url()}};
    std::string out;
    REQUIRE_MESSAGE(run_binary({"admin", "rotate-jwt-key"}, env, out) == 0,
                    out);
    auto kid = json::parse(out.substr(out.find('{')))["kid"].get<std::string>();
    CHECK(kid != first_kid);
    // Node 1 signs with the new key as soon as it heard of it.
    std::string fresh;
    auto refresh = o.refresh;
    REQUIRE(eventually([&] {
      auto r = c.at(1).post("/v2/auth/refresh", {{"refreshToken", refresh}});
      REQUIRE_MESSAGE(r.status == 200, r.body);
      auto body = json::parse(r.body);
      refresh = body["refreshToken"].get<std::string>();
      fresh = body["accessToken"].get<std::string>();
      return kid_of(fresh) == kid;
    }));
    for (int i = 0; i < 3; ++i) {
      CHECK(c.at(i).call("GET", "/v2/auth/me", fresh).status == 200);
      // Signed before the rotation: valid until it expires.
      CHECK(c.at(i).call("GET", "/v2/auth/me", o.jwt).status == 200);
    }
    // A leaked key: rotate again and drop the old ones at once.
    REQUIRE(run_binary({"admin", "rotate-jwt-key", "--drop-old"}, env, out) ==
            0);
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(eventually([&] {
        return c.at(i).call("GET", "/v2/auth/me", o.jwt).status == 401 &&
               c.at(i).call("GET", "/v2/auth/me", fresh).status == 401;
      }));
    }
    // Refresh tokens live in the database: a new pair is signed by the
    // newest key and works everywhere.
    auto r = c.at(2).post("/v2/auth/refresh", {{"refreshToken", refresh}});
    REQUIRE_MESSAGE(r.status == 200, r.body);
    auto newest = json::parse(r.body)["accessToken"].get<std::string>();
    for (int i = 0; i < 3; ++i)
      CHECK(c.at(i).call("GET", "/v2/auth/me", newest).status == 200);
  }

  TEST_CASE("the nodes open the sealed signing keys with the server key "
            "they share; a process with another server key does not start "
            "and says why") {
    MAILASSAY_CLUSTER(c);
    org o{c};
    for (int i = 0; i < c.size(); ++i)
      CHECK(c.at(i).call("GET", "/v2/auth/me", o.jwt).status == 200);
    std::string why;
    try {
      server_process stranger{
          {{"MAILASSAY_DATABASE_URL", c.database_url()},
           {"MAILASSAY_WEBHOOKS_SECRET_KEY", std::string(64, 'f')}}};
    } catch (const std::exception& e) {
      why = e.what();
    }
    CHECK(why.find("does not open with the server key") != std::string::npos);
    for (int i = 0; i < c.size(); ++i)
      CHECK(c.at(i).call("GET", "/v2/auth/me", o.jwt).status == 200);
  }

  TEST_CASE("a key revoked through one process is refused by the others "
            "from their next request, and works again after reactivate") {
    MAILASSAY_CLUSTER(c);
    org o{c};
    auto created = c.at(0).create_key(o.jwt);
    auto id = created["id"].get<std::string>();
    auto key = created["key"].get<std::string>();
    auto probe = [&](int node) {
      return c.at(node).call("GET", "/v2/credits/balance", key).status;
    };
    // answer_ms: how long the revoke took to answer (the writer waits
    // for every process's acknowledgement); refused_ms: from its answer to
    // the other process's first 401 (0 when the very next request was).
    std::vector<double> answer_ms, refused_ms, reactivate_ms;
    int first_refused = 0, first_admitted = 0;
    constexpr int rounds = 10;
    for (int round = 0; round < rounds; ++round) {
      // The key sits in every process's cache.
      for (int i = 0; i < 3; ++i)
        REQUIRE(eventually([&] { return probe(i) == 200; }, 2000ms));
      int by = round % 3;
      int other = (by + 1 + round % 2) % 3;
      auto t0 = steady::now();
      auto r = c.at(by).call("POST", "/v2/api-keys/" + id + "/revoke", o.jwt);
      REQUIRE(r.status == 200);
      answer_ms.push_back(ms_since(t0));
      auto t = steady::now();
      bool at_once = probe(other) == 401;
      if (!at_once)
        MESSAGE("round " << round << ": revoked through " << by << ", node "
                         << other << " admitted the next request");
      first_refused += at_once;
      if (!at_once)
        REQUIRE(eventually([&] { return probe(other) == 401; }, 2000ms));
      refused_ms.push_back(at_once ? 0.0 : ms_since(t));
      // Every process refuses it, from its very next request on.
      for (int i = 0; i < 3; ++i)
        CHECK_MESSAGE(probe(i) == 401, "round " << round << ", node " << i);
      r = c.at(by).call("POST", "/v2/api-keys/" + id + "/reactivate", o.jwt);
      REQUIRE(r.status == 200);
      t = steady::now();
      at_once = probe(other) == 200;
      first_admitted += at_once;
      if (!at_once)
        REQUIRE(eventually([&] { return probe(other) == 200; }, 2000ms));
      reactivate_ms.push_back(at_once ? 0.0 : ms_since(t));
    }
    auto sorted = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    answer_ms = sorted(answer_ms);
    refused_ms = sorted(refused_ms);
    reactivate_ms = sorted(reactivate_ms);
    MESSAGE("revoke seen by another process: first request refused in "
            << first_refused << "/" << rounds
            << " rounds; delay from the revoke's answer to a 401 there: max "
            << refused_ms.back() << " ms; the revoke answered in median "
            << answer_ms[rounds / 2] << " ms, max " << answer_ms.back()
            << " ms (waiting for every process's acknowledgement)");
    MESSAGE("reactivate: first request admitted in "
            << first_admitted << "/" << rounds << "; delay max "
            << reactivate_ms.back() << " ms");
    CHECK(first_refused == rounds);
    CHECK(first_admitted == rounds);
    // Deleted through one process: gone everywhere.
    REQUIRE(c.at(1).call("DELETE", "/v2/api-keys/" + id, o.jwt).status == 204);
    for (int i = 0; i < 3; ++i)
      CHECK(eventually([&] { return probe(i) == 401; }, 2000ms));
  }

  TEST_CASE("an organization erased through one process: its key and its "
            "token are refused by every process from the next request") {
    MAILASSAY_CLUSTER(c);
    auto email = unique_email("erase");
    auto s = c.at(0).signup("Erased", email);
    auto jwt = s["accessToken"].get<std::string>();
    auto key = c.at(0).create_key(jwt)["key"].get<std::string>();
    org other{c};
    auto other_key = c.at(0).create_key(other.jwt)["key"].get<std::string>();
    auto probe = [&](int node, const std::string& credential) {
      return c.at(node).call("GET", "/v2/credits/balance", credential).status;
    };
    // The key sits in every process's cache, the token works everywhere.
    for (int i = 0; i < 3; ++i) {
      REQUIRE(eventually([&] { return probe(i, key) == 200; }, 2000ms));
      REQUIRE(probe(i, jwt) == 200);
    }
    auto r = c.at(1).call("DELETE", "/v2/organization", jwt,
                          R"({"password": "correct horse battery"})");
    REQUIRE_MESSAGE(r.status == 204, r.body);
    // No eventually: the very next request on each process is refused.
    for (int i = 0; i < 3; ++i) {
      CHECK_MESSAGE(probe(i, key) == 401, "key, node " << i);
      CHECK_MESSAGE(probe(i, jwt) == 401, "token, node " << i);
      CHECK_MESSAGE(probe(i, other_key) == 200, "other key, node " << i);
    }
  }

  TEST_CASE("150 validations from one IP over three processes: 100 accepted, "
            "the rest 429 with Retry-After") {
    MAILASSAY_CLUSTER(c);
    org o{c};
    auto key = c.at(0).create_key(o.jwt)["key"].get<std::string>();
    std::vector<std::unique_ptr<http_connection>> conns;
    for (int i = 0; i < 3; ++i)
      conns.push_back(std::make_unique<http_connection>(c.node(i).port()));
    int accepted = 0, refused = 0, other = 0;
    auto t0 = steady::now();
    for (int n = 0; n < 150; ++n) {
      auto r = conns[n % 3]->request("POST", "/v2/email/validate",
                                     {{"Authorization", "Bearer " + key},
                                      {"Content-Type", "application/json"}},
                                     R"({"email":"not-an-address"})");
      if (r.status == 429) {
        ++refused;
        CHECK(std::stol(r.header("retry-after")) >= 1);
        CHECK(json::parse(r.body)["message"] ==
              "Too many requests from this IP, please try again later");
      } else if (r.status == 200) {
        ++accepted;
      } else {
        ++other;
        MESSAGE("unexpected " << r.status << " " << r.body);
      }
    }
    auto elapsed = ms_since(t0);
    // A window of 100 per minute refills one token every 600 ms: a burst
    // that took longer may have earned that many more.
    auto refilled = static_cast<int>(elapsed / 600);
    MESSAGE("150 validations round-robin over 3 processes in "
            << elapsed << " ms: " << accepted << " accepted, " << refused
            << " refused");
    CHECK(other == 0);
    CHECK(accepted >= 100);
    CHECK(accepted <= 100 + refilled);
    CHECK(accepted + refused == 150);
  }

  TEST_CASE("a key limited to 5 per minute: exactly 5 accepted across the "
            "processes, and RateLimit-Remaining counts down across them") {
    MAILASSAY_CLUSTER(c);
    org o{c};
    auto key =
        c.at(0)
            .create_key(o.jwt, {{"name", "five"},
                                {"rateLimits", {{"perMinute", 5}}}})["key"]
            .get<std::string>();
    std::vector<long> remaining;
    int accepted = 0, refused = 0;
    for (int n = 0; n < 12; ++n) {
      auto r = c.at(n % 3).call("POST", "/v2/email/validate", key,
                                R"({"email":"not-an-address"})");
      CAPTURE(n);
      CAPTURE(r.body);
      if (r.status == 200) {
        ++accepted;
        remaining.push_back(std::stol(r.header("ratelimit-remaining")));
      } else {
        REQUIRE(r.status == 429);
        ++refused;
        CHECK(std::stol(r.header("retry-after")) >= 1);
        CHECK(json::parse(r.body)["message"] ==
              "API key per-minute rate limit exceeded (5 requests per "
              "minute), please try again later");
      }
    }
    // One token returns every 12 s: 12 requests take far less.
    CHECK(accepted == 5);
    CHECK(refused == 7);
    CHECK(remaining == std::vector<long>{4, 3, 2, 1, 0});
    for (int i = 0; i < 3; ++i)
      CHECK(c.at(i).metric("mailassay_rate_limit_shared_checks{decided_by="
                           "\"local_fallback\"}") == 0);
  }

  TEST_CASE("Redis stopped mid-test: requests are still answered on local "
            "limits, /metrics shows the fall-back, shared limits resume "
            "when Redis returns") {
    redis_process redis;
    MAILASSAY_CLUSTER(c, cluster_options{3, redis.url()});
    org o{c};
    auto limited = [&](int per_minute) {
      return c.at(0)
          .create_key(o.jwt,
                      {{"name", "l"},
                       {"rateLimits", {{"perMinute", per_minute}}}})["key"]
          .get<std::string>();
    };
    // n validations round-robin; returns how many were accepted.
    auto validate = [&](const std::string& key, int n) {
      int accepted = 0;
      for (int i = 0; i < n; ++i) {
        auto r = c.at(i % 3).call("POST", "/v2/email/validate", key,
                                  R"({"email":"not-an-address"})");
        CAPTURE(r.body);
        REQUIRE((r.status == 200 || r.status == 429));
        accepted += r.status == 200;
      }
      return accepted;
    };
    auto fallbacks = [&](int i) {
      return c.at(i).metric(
          "mailassay_rate_limit_shared_checks{decided_by=\"local_fallback\"}");
    };
    for (int i = 0; i < 3; ++i)
      REQUIRE(eventually(
          [&] { return c.at(i).metric("mailassay_redis_up") == 1; }));
    CHECK(validate(limited(3), 9) == 3);

    redis.stop();
    for (int i = 0; i < 3; ++i)
      CHECK(eventually(
          [&] { return c.at(i).metric("mailassay_redis_up") == 0; }));
    // Each process limits on its own: 3 each, 9 in all, and nothing fails.
    auto key = limited(3);
    CHECK(validate(key, 12) == 9);
    for (int i = 0; i < 3; ++i) {
      CHECK(fallbacks(i) >= 4);
      CHECK(c.at(i).metric("mailassay_redis_failures") >= 1);
    }

    redis.start();
    for (int i = 0; i < 3; ++i)
      REQUIRE(eventually(
          [&] { return c.at(i).metric("mailassay_redis_up") == 1; }));
    std::vector<double> before;
    for (int i = 0; i < 3; ++i)
      before.push_back(fallbacks(i));
    CHECK(validate(limited(3), 9) == 3);
    for (int i = 0; i < 3; ++i)
      CHECK(fallbacks(i) == before[i]);
  }

  TEST_CASE("a batch cancel through any process stops the job within 2 s") {
    dns_peer dns;
    // Every domain's answer takes 20 s: the job runs until cancelled.
    dns.load_zone("*.slow.test MX 10 mx.slow.test\n"
                  "*.slow.test DELAY 20000\n");
    MAILASSAY_CLUSTER(
        c,
        cluster_options{3,
                        "",
                        {{"MAILASSAY_DNS_SERVERS", dns.server()},
                         {"MAILASSAY_DNS_TIMEOUT_MS", "30000"},
                         {"MAILASSAY_DNS_TRIES", "1"},
                         {"MAILASSAY_BATCH_POLL_MS", "100"},
                         {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"}}});
    org o{c};
    auto key = c.at(0).create_key(o.jwt)["key"].get<std::string>();
    std::string csv = "email\n";
    for (int i = 0; i < 4; ++i)
      csv += "ann@d" + std::to_string(i) + ".slow.test\n";
    auto up = c.at(0).call(
        "POST", "/v2/batch/upload", "", csv,
        {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    // Whichever process claimed it runs it.
    int runner = -1;
    REQUIRE(eventually(
        [&] {
          for (int i = 0; i < 3; ++i)
            if (c.at(i).metric("mailassay_batch_running_jobs") == 1)
              runner = i;
          return runner >= 0;
        },
        30s));
    int other = (runner + 1) % 3;
    auto t = steady::now();
    auto r = c.at(other).call("POST", "/v2/batch/" + id + "/cancel", key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    CHECK(json::parse(r.body)["status"] == "cancelled");
    CHECK(eventually(
        [&] {
          return c.at(runner).metric("mailassay_batch_running_jobs") == 0;
        },
        5s));
    auto stopped_ms = ms_since(t);
    MESSAGE("cancelled through node " << other << ", node " << runner
                                      << " stopped the job in " << stopped_ms
                                      << " ms");
    CHECK(stopped_ms < 2000);
  }

  TEST_CASE("without Redis every process limits on its own, and tokens and "
            "revokes still reach every process") {
    MAILASSAY_CLUSTER(c, cluster_options{3, "none"});
    org o{c};
    auto created = c.at(0).create_key(
        o.jwt, {{"name", "two"}, {"rateLimits", {{"perMinute", 2}}}});
    auto key = created["key"].get<std::string>();
    int accepted = 0;
    for (int n = 0; n < 9; ++n)
      accepted += c.at(n % 3)
                      .call("POST", "/v2/email/validate", key,
                            R"({"email":"not-an-address"})")
                      .status == 200;
    CHECK(accepted == 6);
    CHECK(c.at(0).call("GET", "/metrics").body.find("mailassay_redis_up") ==
          std::string::npos);
    for (int i = 0; i < 3; ++i)
      CHECK(c.at(i).call("GET", "/v2/auth/me", o.jwt).status == 200);
    auto id = created["id"].get<std::string>();
    REQUIRE(
        c.at(2).call("POST", "/v2/api-keys/" + id + "/revoke", o.jwt).status ==
        200);
    for (int i = 0; i < 3; ++i) {
      auto t = steady::now();
      CHECK(eventually(
          [&] {
            return c.at(i).call("GET", "/v2/credits/balance", key).status ==
                   401;
          },
          2000ms));
      MESSAGE("node " << i << " refused the revoked key after " << ms_since(t)
                      << " ms");
    }
  }

  TEST_CASE("a catch-all domain is probed once across the processes") {
    dns_peer dns;
    dns.load_zone("mx.peer.test A 127.0.0.1\n"
                  "catchall.test MX 10 mx.peer.test\n");
    smtp_peer mx;
    mx.add_rule("*@catchall.test", smtp_rcpt_behaviour::accept);
    auto env = smtp_server_env(
        dns.server(), std::to_string(mx.port()),
        {{"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
         {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "0"},
         {"MAILASSAY_SMTP_TLS", "never"}});
    MAILASSAY_CLUSTER(c, cluster_options{3, "", env});
    api a0 = c.at(0);
    auto [jwt, key] = smtp_account(a0, "CatchAll");
    auto validate = [&](int node, const std::string& email) {
      auto r = c.at(node).post(
          "/v2/email/validate",
          {{"email", email}, {"smtp", true}, {"timeout", 10000}}, key);
      REQUIRE_MESSAGE(r.status == 200, r.body);
      auto b = json::parse(r.body);
      CHECK(b["status"] == "risky");
      CHECK(b["smtp"]["catchAll"] == true);
    };
    auto probes = [&] {
      double n = 0;
      for (int i = 0; i < 3; ++i)
        n += c.at(i).metric("mailassay_smtp_catch_all_probes");
      return n;
    };
    validate(0, "ann@catchall.test");
    CHECK(probes() == 1);
    // The verdict travels to the other processes' mirrors.
    for (int i = 1; i < 3; ++i)
      REQUIRE(eventually([&] {
        return c.at(i).metric(
                   "mailassay_smtp_catch_all_shared{way=\"heard\"}") >= 1;
      }));
    validate(1, "bob@catchall.test");
    validate(2, "cid@catchall.test");
    CHECK(probes() == 1);
    for (int i = 1; i < 3; ++i)
      CHECK(c.at(i).metric("mailassay_smtp_catch_all_cache_hits") == 1);
  }

  TEST_CASE("sessions per MX host are limited across the processes with "
            "Redis, by each process while Redis is away, and per process "
            "without Redis") {
    // Twelve domains on one MX host, whose every reply takes 100 ms: a
    // session lasts about a second, so sessions of different processes
    // overlap unless they share the limit.
    dns_peer dns;
    std::string zone = "mx.peer.test A 127.0.0.1\n";
    for (int d = 0; d < 12; ++d)
      zone += "d" + std::to_string(d) + ".test MX 10 mx.peer.test\n";
    dns.load_zone(zone);
    mailassay::tests::peers::smtp_peer_options po;
    po.reply_delay = 100ms;
    smtp_peer mx{po};
    // The probers' addresses exist; the random one of the catch-all probe
    // does not (the domains are not catch-all).
    for (auto tag : {"ann-*", "bob-*", "cid-*", "dan-*"})
      mx.add_rule(tag, smtp_rcpt_behaviour::accept);
    mx.set_default({"*", smtp_rcpt_behaviour::no_such_user, {}, ""});
    constexpr int limit = 2;
    auto env = smtp_server_env(
        dns.server(), std::to_string(mx.port()),
        {{"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
         {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", std::to_string(limit)},
         {"MAILASSAY_SMTP_TLS", "never"}});
    // 24 validations at once, 8 per process, two addresses per domain
    // (`tag` makes them new: answers are cached).
    auto burst = [&](cluster& c, const std::string& key, const char* tag) {
      std::vector<int> status(24);
      std::vector<std::string> verdict(24);
      std::vector<std::thread> threads;
      for (int n = 0; n < 24; ++n)
        threads.emplace_back([&, n] {
          auto r =
              c.at(n % 3).post("/v2/email/validate",
                               {{"email", tag + std::to_string(n) + "@d" +
                                              std::to_string(n % 12) + ".test"},
                                {"smtp", true},
                                {"timeout", 30000}},
                               key);
          status[n] = r.status;
          if (r.status == 200)
            verdict[n] = json::parse(r.body)["status"].get<std::string>();
        });
      for (auto& t : threads)
        t.join();
      for (int n = 0; n < 24; ++n) {
        CAPTURE(n);
        CHECK(status[n] == 200);
        CHECK(verdict[n] == "valid");
      }
    };
    auto sum = [](cluster& c, const std::string& metric) {
      double n = 0;
      for (int i = 0; i < c.size(); ++i)
        n += c.at(i).metric(metric);
      return n;
    };
    const std::string by_redis =
        "mailassay_smtp_host_slots_shared{decided_by=\"redis\"}";
    const std::string by_fallback =
        "mailassay_smtp_host_slots_shared{decided_by=\"local_fallback\"}";
    {
      redis_process redis;
      MAILASSAY_CLUSTER(c, cluster_options{3, redis.url(), env});
      api a0 = c.at(0);
      auto [jwt, key] = smtp_account(a0, "Politeness");
      mx.reset_counts();
      burst(c, key, "ann-");
      MESSAGE("with Redis: at most " << mx.peak_dialogues()
                                     << " sessions at once over "
                                     << mx.connections() << " connections");
      CHECK(mx.peak_dialogues() <= limit);
      CHECK(sum(c, by_redis) == static_cast<double>(mx.connections()));
      CHECK(sum(c, by_fallback) == 0);
      // Every slot was given back once the sessions are over.
      REQUIRE(eventually([&] { return mx.active_connections() == 0; }));
      CHECK(eventually([&] {
        // RESP: ":0\r\n".
        return redis_command(redis.port(), "ZCARD " + c.redis_prefix() +
                                               "mx:mx.peer.test") == ":0\r\n";
      }));

      // Redis away: every probe is still answered, each process keeping
      // its own limit, and /metrics says so.
      redis.stop();
      for (int i = 0; i < 3; ++i)
        REQUIRE(eventually(
            [&] { return c.at(i).metric("mailassay_redis_up") == 0; }));
      mx.reset_counts();
      burst(c, key, "bob-");
      MESSAGE("Redis away: at most " << mx.peak_dialogues()
                                     << " sessions at once");
      CHECK(mx.peak_dialogues() <= 3 * limit);
      CHECK(sum(c, by_fallback) == static_cast<double>(mx.connections()));

      // Back: Redis decides again.
      redis.start();
      for (int i = 0; i < 3; ++i)
        REQUIRE(eventually(
            [&] { return c.at(i).metric("mailassay_redis_up") == 1; }));
      REQUIRE(eventually([&] { return mx.active_connections() == 0; }));
      auto fallback_before = sum(c, by_fallback);
      mx.reset_counts();
      burst(c, key, "cid-");
      CHECK(mx.peak_dialogues() <= limit);
      CHECK(sum(c, by_fallback) == fallback_before);
    }
    {
      // Without Redis each process keeps its own limit: the peer sees more
      // at once (this proves the test can tell).
      MAILASSAY_CLUSTER(c, cluster_options{3, "none", env});
      api a0 = c.at(0);
      auto [jwt, key] = smtp_account(a0, "PolitenessAlone");
      mx.reset_counts();
      burst(c, key, "dan-");
      MESSAGE("without Redis: " << mx.peak_dialogues() << " sessions at once");
      CHECK(mx.peak_dialogues() > limit);
      CHECK(mx.peak_dialogues() <= 3 * limit);
      CHECK(c.at(0)
                .call("GET", "/metrics")
                .body.find("mailassay_smtp_host_slots_shared") ==
            std::string::npos);
    }
  }
}
