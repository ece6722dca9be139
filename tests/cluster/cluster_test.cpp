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
    std::vector<double> revoke_ms, reactivate_ms;
    int first_refused = 0, first_admitted = 0;
    constexpr int rounds = 10;
    for (int round = 0; round < rounds; ++round) {
      // The key sits in every process's cache (the last reactivate may
      // still be on its way to the third process).
      for (int i = 0; i < 3; ++i)
        REQUIRE(eventually([&] { return probe(i) == 200; }, 2000ms));
      int by = round % 3;
      int other = (by + 1 + round % 2) % 3;
      auto r = c.at(by).call("POST", "/v2/api-keys/" + id + "/revoke", o.jwt);
      REQUIRE(r.status == 200);
      auto t = steady::now();
      bool at_once = probe(other) == 401;
      if (!at_once)
        MESSAGE("round " << round << ": revoked through " << by << ", node "
                         << other << " admitted the next request");
      first_refused += at_once;
      if (!at_once)
        REQUIRE(eventually([&] { return probe(other) == 401; }, 2000ms));
      revoke_ms.push_back(ms_since(t));
      // Every process refuses it.
      for (int i = 0; i < 3; ++i) {
        auto ti = steady::now();
        CHECK(eventually([&] { return probe(i) == 401; }, 2000ms));
        if (ms_since(ti) > 1)
          MESSAGE("round " << round << ": node " << i << " refused after "
                           << ms_since(ti) << " ms");
      }
      r = c.at(by).call("POST", "/v2/api-keys/" + id + "/reactivate", o.jwt);
      REQUIRE(r.status == 200);
      t = steady::now();
      at_once = probe(other) == 200;
      first_admitted += at_once;
      if (!at_once)
        REQUIRE(eventually([&] { return probe(other) == 200; }, 2000ms));
      reactivate_ms.push_back(ms_since(t));
    }
    std::sort(revoke_ms.begin(), revoke_ms.end());
    std::sort(reactivate_ms.begin(), reactivate_ms.end());
    MESSAGE("revoke seen by another process: first request refused in "
            << first_refused << "/" << rounds << " rounds; delay until 401 "
            << "median " << revoke_ms[rounds / 2] << " ms, max "
            << revoke_ms.back() << " ms");
    MESSAGE("reactivate: first request admitted in "
            << first_admitted << "/" << rounds << "; median "
            << reactivate_ms[rounds / 2] << " ms, max " << reactivate_ms.back()
            << " ms");
    // The target is under 100 ms; a loaded 2-core machine may stall one
    // round, so the bound checked is on the median.
    CHECK(revoke_ms[rounds / 2] < 100);
    // Deleted through one process: gone everywhere.
    REQUIRE(c.at(1).call("DELETE", "/v2/api-keys/" + id, o.jwt).status == 204);
    for (int i = 0; i < 3; ++i)
      CHECK(eventually([&] { return probe(i) == 401; }, 2000ms));
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
}
