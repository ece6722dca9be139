// How batch work shares the machine with real-time requests: its threads
// run at a lower priority, and greylisted addresses wait outside the
// concurrency limit (docs/batch.md, "Scheduling").

#include "tests/http/smtp_service.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_rcpt_behaviour;
using mailassay::tests::peers::smtp_rcpt_rule;

namespace {

constexpr const char* zone = R"(
mx.peer.test A 127.0.0.1
smtp.test MX 10 mx.peer.test
grey.test MX 10 mx.peer.test
*.slow.test MX 10 mx.peer.test
*.slow.test DELAY 20000
)";

struct thread_info {
  std::string name;
  int nice = 0;
};

// Every thread of process `pid`: its name (comm) and niceness (field 19 of
// /proc/PID/task/TID/stat, counted after the parenthesised name).
std::vector<thread_info> threads_of(int pid) {
  std::vector<thread_info> out;
  auto dir = "/proc/" + std::to_string(pid) + "/task";
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream comm{e.path() / "comm"};
    std::ifstream stat{e.path() / "stat"};
    thread_info t;
    std::getline(comm, t.name);
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close == std::string::npos)
      continue; // the thread ended meanwhile
    std::istringstream fields{line.substr(close + 2)};
    std::string f;
    // Fields 3..19: state is the 3rd, nice the 19th.
    for (int i = 3; i <= 19 && fields >> f; ++i)
      if (i == 19)
        t.nice = std::stoi(f);
    out.push_back(t);
  }
  return out;
}

// `n` addresses of one domain: a single DNS lookup, the rest is CPU.
std::string pacing_csv(const std::string& tag, int n = 2000) {
  std::string s = "email\n";
  for (int i = 0; i < n; ++i)
    s += tag + std::to_string(i) + "@smtp.test\n";
  return s;
}

struct scheduling_env : smtp_service {
  explicit scheduling_env(std::map<std::string, std::string> extra) {
    start(zone,
          {{"MAILASSAY_DNS_TIMEOUT_MS", "30000"},
           {"MAILASSAY_DNS_TRIES", "1"},
           {"MAILASSAY_BATCH_POLL_MS", "100"},
           {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
           {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "0"},
           {"MAILASSAY_SMTP_TLS", "never"}},
          extra, "P");
  }

  std::string upload(const std::string& csv, const std::string& query = "") {
    auto r = a->call(
        "POST", "/v2/batch/upload" + query, "", csv,
        {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(r.status == 201, r.body);
    return json::parse(r.body)["id"].get<std::string>();
  }

  json job(const std::string& id) {
    auto r = a->call("GET", "/v2/batch/" + id, key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }

  // Runs a job while real-time validations arrive all along; returns how
  // many times the job was held back meanwhile. Paced (`enough` > 0): a job
  // of 20000 addresses, cancelled once it was held back `enough` times --
  // unpaced it runs for seconds, so a loaded machine's gaps in the traffic
  // (during which it rightly runs unpaced) cannot cover all of it, as they
  // could a job of 2000. Unpaced (`enough` == 0): 2000 addresses, run to the
  // end.
  double paced_waits_of_busy_job(const std::string& tag, double enough = 20) {
    auto paced = [&] { return a->metric("mailassay_batch_paced_waits"); };
    std::atomic<bool> stop{false};
    std::atomic<int> answered{0};
    std::thread traffic{[&] {
      while (!stop) {
        auto r =
            a->post("/v2/email/validate", {{"email", "ann@smtp.test"}}, key);
        if (r.status == 200)
          ++answered;
      }
    }};
    // Wait until the traffic flows (a condition, not a time).
    auto flowing = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (answered < 5 && std::chrono::steady_clock::now() < flowing)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto before = paced();
    if (answered >= 5) {
      if (enough <= 0) {
        wait_completed(upload(pacing_csv(tag)));
      } else {
        auto id = upload(pacing_csv(tag, 20000));
        auto until =
            std::chrono::steady_clock::now() + std::chrono::seconds(120);
        for (;;) {
          auto status = job(id)["status"];
          if (paced() - before >= enough || status == "completed" ||
              std::chrono::steady_clock::now() > until)
            break;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        a->call("POST", "/v2/batch/" + id + "/cancel", key);
        wait_ended(id);
      }
    }
    stop = true;
    traffic.join();
    REQUIRE(answered >= 5);
    return paced() - before;
  }

  // Waits until job `id` is completed or cancelled.
  json wait_ended(const std::string& id) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (;;) {
      auto j = job(id);
      if (j["status"] == "completed" || j["status"] == "cancelled")
        return j;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  json wait_completed(const std::string& id) {
    // Generous: only a failure waits this long, and a loaded machine is slow.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (;;) {
      auto j = job(id);
      if (j["status"] == "completed")
        return j;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
};

} // namespace

TEST_SUITE("api.batch_scheduling") {
  TEST_CASE("batch work runs on threads of lower priority than requests") {
    scheduling_env env{{{"MAILASSAY_BATCH_NICE", "15"}}};
    // Each domain's DNS answer takes 20 s: the job stays in processing until
    // it is cancelled below.
    std::string csv = "email\n";
    for (int i = 0; i < 4; ++i)
      csv += "ann@d" + std::to_string(i) + ".slow.test\n";
    auto id = env.upload(csv);
    // The job is claimed (status processing) just before its supervisor
    // starts: look until its thread shows up.
    std::vector<thread_info> seen;
    auto has_supervisor = [&] {
      for (auto& t : seen)
        if (t.name == "batch-job")
          return true;
      return false;
    };
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!has_supervisor() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      seen = threads_of(env.srv->pid());
    }
    int supervisors = 0, batch_db = 0, others = 0;
    for (auto& t : seen) {
      CAPTURE(t.name);
      if (t.name == "batch-job") {
        ++supervisors;
        CHECK(t.nice == 15);
      } else if (t.name == "batch-db") {
        ++batch_db;
        CHECK(t.nice == 15);
      } else {
        // Request handling, scheduler, DNS and storage threads keep the
        // normal priority.
        ++others;
        CHECK(t.nice == 0);
      }
    }
    CHECK(supervisors == 1);
    CHECK(batch_db >= 1);
    CHECK(others >= 4);
    auto cancel = env.a->call("POST", "/v2/batch/" + id + "/cancel", env.key);
    CHECK_MESSAGE(cancel.status == 200, cancel.body);
    // The supervisor's thread ends with its job, although its validations
    // still wait for DNS.
    auto supervisor_alive = [&] {
      for (auto& t : threads_of(env.srv->pid()))
        if (t.name == "batch-job")
          return true;
      return false;
    };
    // Well before the 20 s DNS answers; on a busy machine the cancel may
    // take seconds to reach the supervisor (it took more than 2 s once).
    auto gone = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (supervisor_alive() && std::chrono::steady_clock::now() < gone)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK_FALSE(supervisor_alive());
  }

  TEST_CASE(
      "a greylisted address is parked while the rest of the job goes on") {
    scheduling_env env{
        {{"MAILASSAY_BATCH_CONCURRENCY", "1"},
         {"MAILASSAY_BATCH_GREYLIST_RETRY_MS", "700,700,700,700,700,700,700"},
         {"MAILASSAY_SMTP_RETRY_DELAYS_MS", "600,1200"}}};
    // Deferred until the same recipient returns 3 s later.
    env.mx.add_rule(smtp_rcpt_rule{"*@grey.test", smtp_rcpt_behaviour::greylist,
                                   std::chrono::milliseconds(3000), ""});
    env.mx.add_rule("ann*", smtp_rcpt_behaviour::accept);
    env.mx.add_rule("*@smtp.test", smtp_rcpt_behaviour::no_such_user);
    // Sorted by domain, grey.test comes first: with one address in flight,
    // a wait inside the prober would hold up every other address.
    std::string csv = "email\nann@grey.test\n";
    for (int i = 0; i < 10; ++i)
      csv += "ann" + std::to_string(i) + "@smtp.test\n";
    auto id = env.upload(csv, "?smtp=true");
    // Progress is checkpointed about every second; the first figure that
    // shows the ten must not include the greylisted one, which needs 3 s.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    json j;
    for (;;) {
      j = env.job(id);
      if (j["processed"].get<int>() >= 10)
        break;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK_MESSAGE(j["status"] == "processing", j.dump());
    CHECK(j["processed"] == 10);
    auto done = env.wait_completed(id);
    CHECK(done["counts"]["valid"] == 11);
    CHECK(done["creditsUsed"] == 11);
    auto rows =
        env.a->call("GET", "/v2/batch/" + id + "/results?format=json", env.key);
    REQUIRE(rows.status == 200);
    bool found = false;
    auto body = json::parse(rows.body);
    for (auto& r : body["results"]) {
      if (r["email"] == "ann@grey.test") {
        found = true;
        CHECK_MESSAGE(r["status"] == "valid", r.dump());
      }
    }
    CHECK_MESSAGE(found, rows.body);
  }

  TEST_CASE(
      "an address deferred through every pass is unknown and greylisted") {
    scheduling_env env{{{"MAILASSAY_BATCH_GREYLIST_RETRY_MS", "200,200"}}};
    env.mx.add_rule(smtp_rcpt_rule{"*@grey.test", smtp_rcpt_behaviour::greylist,
                                   std::chrono::milliseconds(60000), ""});
    auto id = env.upload("email\nann@grey.test\n", "?smtp=true");
    auto done = env.wait_completed(id);
    CHECK(done["counts"]["unknown"] == 1);
    // The server answered each pass: the one reserved credit is used, once.
    CHECK(done["creditsUsed"] == 1);
    // The first pass and two more, each a new session.
    CHECK(env.mx.commands("RCPT") >= 3);
  }
}

TEST_SUITE("api.batch_scheduling") {
  TEST_CASE("a job slows to rate_under_load while real-time validations "
            "arrive, and runs at full speed otherwise") {
    scheduling_env env{{{"MAILASSAY_BATCH_RATE_UNDER_LOAD", "400"}}};
    using clock = std::chrono::steady_clock;
    auto seconds = [](clock::duration d) {
      return std::chrono::duration<double>(d).count();
    };
    // The pace is observed through its own counter, not a stopwatch: how
    // fast an unpaced job runs depends on how busy the machine is.
    auto paced = [&] { return env.a->metric("mailassay_batch_paced_waits"); };
    // No real-time traffic: the job is never held back.
    auto paced_before_idle = paced();
    env.wait_completed(env.upload(pacing_csv("idle")));
    CHECK(paced() == paced_before_idle);
    // Validations arriving all along: at most 400 addresses/s (plus one
    // 10 ms bucket), so the job needs about 5 s, held back in 10 ms steps;
    // a loaded machine only makes it slower.
    auto t1 = clock::now();
    auto waits = env.paced_waits_of_busy_job("busy");
    auto busy = seconds(clock::now() - t1);
    // The job was held back while the traffic flowed (none when idle). The
    // rate itself is checked with simulated time in
    // tests/core/batch/pace_test.cpp: here a loaded machine leaves gaps in
    // the traffic, during which the job rightly runs unpaced.
    CHECK_MESSAGE(waits >= 20, waits);
    MESSAGE("busy job: " << busy << " s, " << waits << " waits");
  }
}

TEST_SUITE("api.batch_scheduling") {
  TEST_CASE("SIGHUP with a new rate_under_load paces the next job; an "
            "invalid one keeps the pace and the log says why") {
    auto dir = temp_dir("reload-pace");
    auto file = dir + "/mailassay.toml";
    std::ofstream{file} << "[batch]\nrate_under_load = 0\n";
    scheduling_env env{
        {{"MAILASSAY_CONFIG", file}, {"MAILASSAY_LOG_LEVEL", "info"}}};
    auto reload_logged = [&](const std::string& event, int nth) {
      REQUIRE(::kill(env.srv->pid(), SIGHUP) == 0);
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      auto count = [&] {
        auto log = env.srv->log();
        int n = 0;
        for (auto at = log.find(event); at != std::string::npos;
             at = log.find(event, at + 1))
          ++n;
        return n;
      };
      while (count() < nth && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      REQUIRE_MESSAGE(count() >= nth, env.srv->log());
    };
    // No cap: never held back, however much real-time traffic arrives.
    CHECK(env.paced_waits_of_busy_job("free", 0) == 0);
    std::ofstream{file, std::ios::trunc} << "[batch]\nrate_under_load = 400\n";
    reload_logged("\"config_reloaded\"", 1);
    CHECK(env.srv->log().find("batch.rate_under_load 0 -> 400") !=
          std::string::npos);
    auto waits = env.paced_waits_of_busy_job("paced");
    CHECK_MESSAGE(waits >= 20, waits);
    // Refused: the pace of 400/s stays.
    std::ofstream{file, std::ios::trunc} << "[batch]\nrate_under_load = fast\n";
    reload_logged("\"config_reload_refused\"", 1);
    CHECK(env.srv->log().find("batch.rate_under_load expected an integer, "
                              "got \\\"fast\\\"") != std::string::npos);
    waits = env.paced_waits_of_busy_job("kept");
    CHECK_MESSAGE(waits >= 20, waits);
  }
}
