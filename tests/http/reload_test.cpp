// A running server reloads its settings on SIGHUP (app/reload.cpp), and
// `mailassay status` prints its live gauges: black-box, against the real
// binary, an SMTP peer that holds every session (so sessions overlap for as
// long as the requests wait) and the DNS peer.
#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;
using mailassay::tests::peers::smtp_greeting;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::smtp_peer_options;

namespace {

constexpr const char* zone = R"(
mx.held.test A 127.0.0.36
held.test MX 10 mx.held.test
)";

// A server whose per-host SMTP politeness comes from a configuration file
// (the environment would win over the file), with one session per
// validation (sharing off), so concurrent validations of one domain open
// as many sessions as the host's limit allows.
struct reload_env {
  dns_peer dns;
  std::unique_ptr<smtp_peer> held;
  std::string dir = temp_dir("reload");
  std::string file = dir + "/mailassay.toml";
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string key;

  reload_env() {
    dns.load_zone(zone);
    smtp_peer_options o;
    o.address = "127.0.0.36";
    o.greeting = smtp_greeting::tarpit; // holds every session, never greets
    held = std::make_unique<smtp_peer>(o);
    write("max_sessions_per_host = 1\n");
    auto env = smtp_server_env(dns.server(), std::to_string(held->port()),
                               {{"MAILASSAY_CONFIG", file},
                                {"MAILASSAY_LOG_LEVEL", "info"},
                                {"MAILASSAY_SMTP_SHARE_SESSIONS", "false"},
                                {"MAILASSAY_SMTP_TLS", "never"}});
    srv = std::make_unique<server_process>(env);
    a = std::make_unique<api>(api{*srv});
    key = smtp_account(*a, "R").second;
  }

  // The [smtp] section of the file (the rate stays off: only the session
  // limit decides).
  void write(const std::string& smtp_lines, const std::string& more = "") {
    std::ofstream out{file, std::ios::trunc};
    out << "[smtp]\nconnections_per_second_per_host = 0\n"
        << smtp_lines << more;
  }

  // Sends SIGHUP and waits until the log shows the reload's `event` for
  // the nth time.
  void reload(const std::string& event, int nth = 1) {
    REQUIRE(::kill(srv->pid(), SIGHUP) == 0);
    wait_log(event, nth);
  }

  // Waits until the log shows `event` for the nth time.
  void wait_log(const std::string& event, int nth = 1) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto count = [&] {
      auto log = srv->log();
      int n = 0;
      for (auto at = log.find(event); at != std::string::npos;
           at = log.find(event, at + 1))
        ++n;
      return n;
    };
    while (count() < nth && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_MESSAGE(count() >= nth, srv->log());
  }

  // `n` validations at held.test at once; each waits its whole budget.
  void burst(int n) {
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([this, i, &ok] {
        auto r = a->post("/v2/email/validate",
                         {{"email", "u" + std::to_string(i) + "@held.test"},
                          {"smtp", true},
                          {"timeout", 2500}},
                         key);
        if (r.status == 200)
          ++ok;
      });
    for (auto& t : threads)
      t.join();
    CHECK(ok == n);
  }

  double peak() {
    return a->metric(
        "mailassay_smtp_host_sessions_peak{host=\"mx.held.test\"}");
  }
};

} // namespace

TEST_SUITE("api.reload") {
  TEST_CASE("SIGHUP with a changed per-host limit takes effect on the next "
            "probe") {
    reload_env env;
    env.burst(3);
    // One session at a time, as the file says.
    CHECK(env.peak() == 1);
    env.write("max_sessions_per_host = 3\n");
    env.reload("\"config_reloaded\"");
    CHECK(env.srv->log().find("smtp.max_sessions_per_host 1 -> 3") !=
          std::string::npos);
    env.burst(3);
    // The three sessions were open at once.
    CHECK(env.peak() == 3);
  }

  TEST_CASE("SIGHUP with an invalid value keeps the old one and the log says "
            "why; settings that take a restart are named") {
    reload_env env;
    env.write("max_sessions_per_host = -2\n");
    env.reload("\"config_reload_refused\"");
    auto log = env.srv->log();
    CHECK(log.find("smtp.max_sessions_per_host must be between 0 and 10000, "
                   "got -2") != std::string::npos);
    CHECK(log.find("\"config_reloaded\"") == std::string::npos);
    env.burst(3);
    CHECK(env.peak() == 1); // still one session per host
    // A valid file that also changes a pool size: the limit applies, the
    // pool size waits for a restart and the log says so.
    env.write("max_sessions_per_host = 2\n", "[actors]\nstorage_workers = 7\n");
    env.reload("\"config_reloaded\"");
    env.wait_log("\"config_needs_restart\"");
    log = env.srv->log();
    CHECK(log.find("actors.storage_workers") != std::string::npos);
    CHECK(env.a->metric("mailassay_pool_workers{pool=\"storage\"}") == 4);
    env.burst(3);
    CHECK(env.peak() == 2);
  }

  TEST_CASE("SIGHUP applies a new default per-IP limit to the next request") {
    auto dir = temp_dir("reload-limits");
    auto file = dir + "/mailassay.toml";
    std::ofstream{file} << "[limits]\nip_per_minute = 50\n";
    server_process srv{{{"MAILASSAY_CONFIG", file},
                        {"MAILASSAY_LOG_LEVEL", "info"},
                        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"}}};
    api a{srv};
    auto jwt =
        a.signup("L", unique_email("l"))["accessToken"].get<std::string>();
    auto key = a.create_key(jwt)["key"].get<std::string>();
    auto limit = [&] {
      auto r =
          a.post("/v2/email/validate", {{"email", "ann@example.com"}}, key);
      REQUIRE(r.status == 200);
      return r.header("ratelimit-limit");
    };
    CHECK(limit() == "50");
    std::ofstream{file, std::ios::trunc} << "[limits]\nip_per_minute = 70\n";
    REQUIRE(::kill(srv.pid(), SIGHUP) == 0);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (srv.log().find("config_reloaded") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_MESSAGE(srv.log().find("config_reloaded") != std::string::npos,
                    srv.log());
    CHECK(srv.log().find("limits.ip_per_minute 50 -> 70") != std::string::npos);
    CHECK(limit() == "70");
  }

  TEST_CASE("mailassay status prints the live pool gauges in tables") {
    reload_env env;
    env.burst(1);
    std::string out;
    REQUIRE(run_binary({"status", "--url",
                        "http://127.0.0.1:" + std::to_string(env.srv->port())},
                       {}, out) == 0);
    CAPTURE(out);
    CHECK(out.find("pool") != std::string::npos);
    CHECK(out.find("workers") != std::string::npos);
    for (auto pool : {"validation", "storage", "batch_storage"})
      CHECK(out.find(pool) != std::string::npos);
    CHECK(out.find("SMTP sessions since start") != std::string::npos);
    CHECK(out.find("mx.held.test") != std::string::npos);
    // Nothing listening: a clear error, exit 1.
    REQUIRE(run_binary({"status", "--url",
                        "http://127.0.0.1:" + std::to_string(free_port())},
                       {}, out) == 1);
    CHECK(out.find("cannot connect") != std::string::npos);
  }
}
