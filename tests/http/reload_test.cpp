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
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

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

namespace {

// A server whose log level and per-IP limit come from a configuration file
// (no MAILASSAY_LOG_LEVEL in its environment: the file decides).
struct file_env {
  std::string dir = temp_dir("reload-file");
  std::string file = dir + "/mailassay.toml";
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string key;

  explicit file_env(const std::string& text) {
    write(text);
    srv = std::make_unique<server_process>(std::map<std::string, std::string>{
        {"MAILASSAY_CONFIG", file},
        {"MAILASSAY_LOG_LEVEL", unset_variable},
        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"}});
    a = std::make_unique<api>(api{*srv});
    auto jwt =
        a->signup("F", unique_email("f"))["accessToken"].get<std::string>();
    key = a->create_key(jwt)["key"].get<std::string>();
  }

  void write(const std::string& text) {
    std::ofstream{file, std::ios::trunc} << text;
  }

  // Validates one address; returns its RateLimit-Limit header.
  std::string validate() {
    auto r = a->post("/v2/email/validate", {{"email", "ann@example.com"}}, key);
    REQUIRE(r.status == 200);
    return r.header("ratelimit-limit");
  }

  int count(const std::string& what) const {
    auto log = srv->log();
    int n = 0;
    for (auto at = log.find(what); at != std::string::npos;
         at = log.find(what, at + 1))
      ++n;
    return n;
  }

  // Waits until the log holds `what` at least `n` times.
  void wait_log(const std::string& what, int n) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (count(what) < n && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_MESSAGE(count(what) >= n, srv->log());
  }

  // `mailassay admin reload` with `args`; returns its exit code.
  int admin_reload(std::vector<std::string> args, std::string& out,
                   std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), {"admin", "reload"});
    return run_binary(args, std::move(env), out);
  }

  std::string socket() const { return srv->dir() + "/control.sock"; }
};

} // namespace

TEST_SUITE("api.reload") {
  TEST_CASE("SIGHUP with a new log level takes effect on the next request; "
            "an invalid one keeps the old level and the log says why") {
    file_env env{"[log]\nlevel = \"warn\"\n"};
    env.validate();
    // At warn, requests are not logged (info).
    CHECK(env.count("\"http_request\"") == 0);
    env.write("[log]\nlevel = \"info\"\n");
    REQUIRE(::kill(env.srv->pid(), SIGHUP) == 0);
    env.wait_log("\"config_reloaded\"", 1);
    CHECK(env.count("log.level warn -> info") == 1);
    env.validate();
    env.wait_log("\"http_request\"", 1);
    env.write("[log]\nlevel = \"loud\"\n");
    REQUIRE(::kill(env.srv->pid(), SIGHUP) == 0);
    env.wait_log("\"config_reload_refused\"", 1);
    CHECK(env.count("log.level expected one of trace, debug, info, warn, "
                    "error, off") == 1);
    // Still info: the next request is logged too.
    auto before = env.count("\"http_request\"");
    env.validate();
    env.wait_log("\"http_request\"", before + 1);
  }
}

TEST_SUITE("app.admin_reload") {
  TEST_CASE("mailassay admin reload applies a changed value at once and "
            "prints it, and what needs a restart") {
    file_env env{"[limits]\nip_per_minute = 50\n"};
    CHECK(env.validate() == "50");
    env.write("[limits]\nip_per_minute = 70\n[actors]\nstorage_workers = 7\n");
    std::string out;
    REQUIRE_MESSAGE(env.admin_reload({"--socket", env.socket()}, out) == 0,
                    out);
    CHECK(out.find("reloaded " + env.file) != std::string::npos);
    CHECK(out.find("applied: limits.ip_per_minute 50 -> 70") !=
          std::string::npos);
    CHECK(
        out.find("needs a restart (old value kept): actors.storage_workers") !=
        std::string::npos);
    // Applied before the command returned: the very next request has it.
    CHECK(env.validate() == "70");
    CHECK(env.a->metric("mailassay_pool_workers{pool=\"storage\"}") == 4);
    // The socket named by the configuration, as an operator runs it.
    REQUIRE(env.admin_reload(
                {}, out, {{"MAILASSAY_CONTROL_SOCKET", env.socket()}}) == 0);
    CHECK(out.find("applied: nothing changed") != std::string::npos);
  }

  TEST_CASE("mailassay admin reload with an invalid value keeps the old one, "
            "says why and exits 1") {
    file_env env{"[limits]\nip_per_minute = 50\n"};
    env.write("[limits]\nip_per_minute = -3\n");
    std::string out;
    CHECK(env.admin_reload({"--socket", env.socket()}, out) == 1);
    CHECK(out.find("refused:") != std::string::npos);
    CHECK(out.find("limits.ip_per_minute must be between 1 and") !=
          std::string::npos);
    CHECK(out.find("every setting kept as it was") != std::string::npos);
    env.wait_log("\"config_reload_refused\"", 1);
    CHECK(env.validate() == "50");
  }

  TEST_CASE("idle connections on the control socket do not delay mailassay "
            "admin reload") {
    // The server gives a connection 1 s in all to send its command line.
    constexpr auto read_deadline = std::chrono::seconds{1};
    constexpr int idle_clients = 10;
    file_env env{"[limits]\nip_per_minute = 50\n"};
    std::string out;
    auto timed_reload = [&] {
      auto started = std::chrono::steady_clock::now();
      REQUIRE_MESSAGE(env.admin_reload({"--socket", env.socket()}, out) == 0,
                      out);
      return std::chrono::steady_clock::now() - started;
    };
    auto alone = timed_reload();
    std::vector<int> idle;
    for (int i = 0; i < idle_clients; ++i) {
      int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      env.socket().copy(a.sun_path, sizeof a.sun_path - 1);
      REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
      idle.push_back(fd);
    }
    auto behind_idle = timed_reload();
    for (int fd : idle)
      ::close(fd);
    // Served one after another they held it for idle_clients x the
    // deadline (9.6 s for 10); side by side the reload takes what it takes
    // alone, plus less than the deadline of one of them, 2 x for a busy
    // machine.
    CHECK(behind_idle < alone + 2 * read_deadline);
  }

  TEST_CASE("mailassay admin reload without a server says so and exits 1") {
    auto dir = temp_dir("reload-none");
    std::string out;
    CHECK(run_binary({"admin", "reload", "--socket", dir + "/none.sock"}, {},
                     out) == 1);
    CHECK(out.find("nothing answers on " + dir + "/none.sock") !=
          std::string::npos);
    CHECK(run_binary({"admin", "reload"}, {{"MAILASSAY_CONTROL_SOCKET", ""}},
                     out) == 2);
    CHECK(out.find("no control socket") != std::string::npos);
  }
}

TEST_SUITE("app.config") {
  TEST_CASE("mailassay config marks pool sizes [restart] and what a reload "
            "applies [reload]") {
    std::string out;
    REQUIRE(run_binary({"config"}, {}, out) == 0);
    for (auto pool : {"MAILASSAY_HTTP_IO_THREADS=1\t# [restart]",
                      "MAILASSAY_ACTORS_SCHEDULER_THREADS=2\t# [restart]",
                      "MAILASSAY_ACTORS_STORAGE_WORKERS=4\t# [restart]",
                      "MAILASSAY_VALIDATION_WORKERS=2\t# [restart]",
                      "MAILASSAY_BATCH_CONCURRENCY=64\t# [restart]",
                      "MAILASSAY_BATCH_MAX_JOBS=2\t# [restart]",
                      "MAILASSAY_SMTP_IO_THREADS=1\t# [restart]",
                      "MAILASSAY_DNS_MAX_INFLIGHT=256\t# [restart]"})
      CHECK_MESSAGE(out.find(pool) != std::string::npos, pool);
    for (auto live : {"MAILASSAY_LOG_LEVEL=info\t# [reload]",
                      "MAILASSAY_BATCH_RATE_UNDER_LOAD=10000\t# [reload]",
                      "MAILASSAY_LIMITS_IP_PER_MINUTE=100\t# [reload]",
                      "MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST=4\t# [reload]"})
      CHECK_MESSAGE(out.find(live) != std::string::npos, live);
  }
}
