#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mailassay::testing;

namespace {

// A listening socket on a free loopback port; sets `port`.
int listen_on_loopback(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  port = ntohs(a.sin_port);
  return fd;
}

// A loopback listener that answers its one connection with `answer` once
// the request's head has arrived: a server that is up but not healthy.
class one_answer_server {
public:
  explicit one_answer_server(std::string answer) {
    fd_ = listen_on_loopback(port_);
    thread_ = std::thread{[this, answer = std::move(answer)] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0)
        return;
      std::string head;
      char buf[512];
      while (head.find("\r\n\r\n") == std::string::npos) {
        auto n = ::read(c, buf, sizeof buf);
        if (n <= 0)
          break;
        head.append(buf, static_cast<std::size_t>(n));
      }
      (void)!::write(c, answer.data(), answer.size());
      ::close(c);
    }};
  }
  ~one_answer_server() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

} // namespace

TEST_SUITE("api.operations") {
  TEST_CASE("the OpenAPI document lists exactly the routes served") {
    server_process srv;
    std::string out;
    REQUIRE(run_binary({"routes"}, {}, out) == 0);
    std::set<std::string> served;
    std::istringstream lines{out};
    for (std::string method, path; lines >> method >> path;) {
      // OpenAPI writes parameters as {name}.
      std::string templ;
      std::istringstream segs{path};
      for (std::string seg; std::getline(segs, seg, '/');)
        if (!seg.empty())
          templ += "/" + (seg[0] == ':' ? "{" + seg.substr(1) + "}" : seg);
      if (templ.empty())
        templ = "/"; // the dashboard
      for (auto& c : method)
        c = static_cast<char>(std::tolower(c));
      served.insert(method + " " + templ);
    }
    auto doc =
        json::parse(http_request(srv.port(), "GET", "/v2/openapi.json").body);
    CHECK(doc["openapi"].get<std::string>().rfind("3.", 0) == 0);
    std::set<std::string> documented;
    for (auto& [path, ops] : doc["paths"].items())
      for (auto& [method, op] : ops.items())
        if (method != "parameters") {
          documented.insert(method + " " + path);
          CHECK_MESSAGE(op.contains("responses"), (method + " " + path));
        }
    for (auto& s : served)
      CHECK_MESSAGE(documented.count(s) == 1,
                    ("served but not documented: " + s));
    for (auto& d : documented)
      CHECK_MESSAGE(served.count(d) == 1, ("documented but not served: " + d));
  }

  TEST_CASE("status reports components and uptime") {
    server_process srv;
    auto r = http_request(srv.port(), "GET", "/status");
    REQUIRE(r.status == 200);
    auto b = json::parse(r.body);
    CHECK(b["status"] == "operational");
    CHECK(b["uptimeSeconds"].get<long>() >= 0);
    CHECK(b["components"].size() >= 2);
    CHECK(b["components"][1]["name"] == "database");
    CHECK(b["components"][1]["status"] == "operational");
    auto docs = http_request(srv.port(), "GET", "/docs");
    CHECK(docs.status == 200);
    CHECK(docs.header("content-type").find("text/html") == 0);
  }

  TEST_CASE("mailassay status --health: exit 0 only for a 200 from /health") {
    server_process srv;
    std::string out;
    auto url = "http://127.0.0.1:" + std::to_string(srv.port());
    REQUIRE(run_binary({"status", "--health", "--url", url}, {}, out) == 0);
    CHECK(out.find("\"status\":\"healthy\"") != std::string::npos);
    // Without --url it asks the configured listener (the container's case).
    REQUIRE(run_binary({"status", "--health"},
                       {{"MAILASSAY_HTTP_ADDRESS", "0.0.0.0"},
                        {"MAILASSAY_HTTP_PORT", std::to_string(srv.port())}},
                       out) == 0);
    CHECK(out.find("healthy") != std::string::npos);
    {
      // Up but unhealthy (the database does not answer): exit 1.
      one_answer_server sick{"HTTP/1.1 503 Service Unavailable\r\n"
                             "Content-Length: 0\r\nConnection: close\r\n\r\n"};
      REQUIRE(run_binary({"status", "--health", "--url",
                          "http://127.0.0.1:" + std::to_string(sick.port())},
                         {}, out) == 1);
      CHECK(out.find("503") != std::string::npos);
    }
    // Nothing listening: exit 1; a URL it cannot read: exit 2.
    CHECK(run_binary({"status", "--health", "--url",
                      "http://127.0.0.1:" + std::to_string(free_port())},
                     {}, out) == 1);
    CHECK(out.find("cannot connect") != std::string::npos);
    CHECK(run_binary({"status", "--health", "--url", "https://127.0.0.1:1"}, {},
                     out) == 2);
  }

  TEST_CASE("metrics count requests by route and status in Prometheus form") {
    server_process srv;
    http_request(srv.port(), "GET", "/v2/api-keys");
    auto r = http_request(srv.port(), "GET", "/metrics");
    REQUIRE(r.status == 200);
    CHECK(r.header("content-type").find("text/plain") == 0);
    CHECK(r.body.find("mailassay_http_requests_total{route=\"/v2/api-keys\","
                      "status=\"401\"} 1") != std::string::npos);
    CHECK(r.body.find("mailassay_http_request_duration_seconds_bucket") !=
          std::string::npos);
    CHECK(r.body.find("mailassay_pool_workers{pool=\"storage\"}") !=
          std::string::npos);
    CHECK(r.body.find("mailassay_pool_workers{pool=\"batch_storage\"}") !=
          std::string::npos);
    // The rate limiter's tables and counters.
    for (auto* line : {"mailassay_rate_limit_buckets{table=\"ip\"} ",
                       "mailassay_rate_limit_buckets{table=\"key\"} ",
                       "mailassay_rate_limit_checks{outcome=\"refused\"} 0",
                       "mailassay_rate_limit_evictions 0"})
      CHECK_MESSAGE(r.body.find(line) != std::string::npos, line);
    // Prometheus accepts one HELP and TYPE per metric family.
    std::map<std::string, int> helps;
    std::istringstream lines{r.body};
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("# HELP ", 0) == 0)
        ++helps[line.substr(7, line.find(' ', 7) - 7)];
    for (auto& [name, n] : helps)
      CHECK_MESSAGE(n == 1, name);
    CHECK(helps.count("mailassay_pool_workers") == 1);
    CHECK(r.body.find("mailassay_rate_limit_active_evictions 0") !=
          std::string::npos);
  }

  TEST_CASE("several event loops share the port, all serve, and stop") {
    server_process srv{{{"MAILASSAY_HTTP_IO_THREADS", "3"}}};
    // Voluntary context switches of each loop thread: a loop that never
    // got a connection sleeps in epoll_wait and does not switch.
    auto loops = [&] {
      std::map<std::string, long> out;
      auto dir = "/proc/" + std::to_string(srv.pid()) + "/task";
      for (auto& e : std::filesystem::directory_iterator(dir)) {
        std::ifstream comm{e.path() / "comm"};
        std::string name;
        std::getline(comm, name);
        if (name.rfind("http-io-", 0) != 0)
          continue;
        std::ifstream status{e.path() / "status"};
        for (std::string line; std::getline(status, line);)
          if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
            out[name] = std::stol(line.substr(line.find(':') + 1));
      }
      return out;
    };
    // The service answers once its first loop listens; the others open
    // just after (each named before its port opens).
    auto before = loops();
    for (int i = 0; i < 100 && before.size() < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      before = loops();
    }
    REQUIRE(before.size() == 3);
    // 240 connections (one per request) from 12 clients at once: the kernel
    // hashes each to one of the three listening sockets.
    std::atomic<int> ok{0};
    std::vector<std::thread> clients;
    for (int t = 0; t < 12; ++t)
      clients.emplace_back([&] {
        for (int i = 0; i < 20; ++i)
          if (http_request(srv.port(), "GET", "/health").status == 200)
            ++ok;
      });
    for (auto& c : clients)
      c.join();
    CHECK(ok.load() == 240);
    auto after = loops();
    int busy = 0;
    for (auto& [name, switches] : after)
      if (switches - before[name] >= 10)
        ++busy;
    CHECK_MESSAGE(busy >= 2, "loops that served connections: " << busy);
    CHECK(srv.stop() == 0);
  }

  TEST_CASE("connections over the limit wait until one closes") {
    server_process srv{{{"MAILASSAY_HTTP_MAX_CONNECTIONS", "4"}}};
    std::vector<std::unique_ptr<http_connection>> open;
    for (int i = 0; i < 4; ++i) {
      open.push_back(std::make_unique<http_connection>(srv.port()));
      REQUIRE(open.back()->request("GET", "/health").status == 200);
    }
    // A fifth is accepted by the kernel but not served.
    auto waiting = raw_exchange(srv.port(),
                                "GET /health HTTP/1.1\r\nHost: t\r\n\r\n", 800);
    CHECK(waiting.empty());
    open.front().reset();
    auto r = http_request(srv.port(), "GET", "/health");
    CHECK(r.status == 200);
    // The four still open keep working.
    CHECK(open.back()->request("GET", "/health").status == 200);
  }

  TEST_CASE("SIGTERM stops the server cleanly") {
    server_process srv{{{"MAILASSAY_LOG_LEVEL", "info"}}};
    CHECK(srv.stop() == 0);
    auto log = srv.log();
    CHECK(log.find("\"event\":\"stopped\"") != std::string::npos);
  }

  TEST_CASE("logs never contain secrets or passwords") {
    server_process srv{{{"MAILASSAY_LOG_LEVEL", "debug"}}};
    api a{srv};
    auto s = a.signup("A", unique_email("o"));
    auto jwt = s["accessToken"].get<std::string>();
    auto secret = a.create_key(jwt)["key"].get<std::string>();
    a.call("GET", "/v2/credits/balance", secret);
    srv.stop();
    auto log = srv.log();
    CHECK(log.find("\"event\":\"http_request\"") != std::string::npos);
    CHECK(log.find(secret) == std::string::npos);
    CHECK(log.find(jwt) == std::string::npos);
    CHECK(log.find("correct horse battery") == std::string::npos);
  }

  TEST_CASE("a port in use stops the start at once: exit 1 and its message") {
    // Someone else listens on the port (no SO_REUSEPORT: never shared).
    int taken = 0;
    int fd = listen_on_loopback(taken);
    auto port = std::to_string(taken);
    std::string out;
    // Nothing waits for the loops that never ran (a start used to take 5 s
    // more here, waiting to answer their requests).
    CHECK(run_binary_within(std::chrono::milliseconds(4500), {"serve"},
                            {{"MAILASSAY_HTTP_ADDRESS", "127.0.0.1"},
                             {"MAILASSAY_HTTP_PORT", port}},
                            out) == 1);
    CHECK_MESSAGE(out.find("cannot listen on 127.0.0.1:" + port) !=
                      std::string::npos,
                  out);
    ::close(fd);
  }

  TEST_CASE("a bad configuration stops the start with exit code 2") {
    std::string out;
    CHECK(run_binary({"serve"}, {{"MAILASSAY_HTTP_PORT", "99999"}}, out) == 2);
    CHECK(out.find("MAILASSAY_HTTP_PORT") != std::string::npos);
    CHECK(run_binary({"serve"}, {{"MAILASSAY_DATABASE_URL", "mysql://x"}},
                     out) == 2);
    CHECK(out.find("MAILASSAY_DATABASE_URL") != std::string::npos);
  }

  TEST_CASE("a bad setting found once the actor system and the Redis loop "
            "run stops the start in order: exit 2 and its message, at once") {
    // The SMTP identity is checked when the scheduler is made, inside the
    // running actor system; with Redis configured, its connections run
    // too. A start that ended by std::exit with them running could hang
    // or crash; an orderly one stops them and returns.
    std::map<std::string, std::string> env{
        {"MAILASSAY_SMTP_HELO", "localhost"}};
    if (auto* redis = std::getenv("MAILASSAY_TEST_REDIS_URL"))
      env.emplace("MAILASSAY_REDIS_URL", redis);
    std::string out;
    CHECK(run_binary_within(std::chrono::seconds(15), {"serve"}, env, out) ==
          2);
    CHECK_MESSAGE(out.find("mailassay: invalid configuration: smtp.helo: "
                           "\"localhost\" is not a public FQDN") !=
                      std::string::npos,
                  out);
    // Settings read before any thread starts end the same way.
    CHECK(run_binary_within(
              std::chrono::seconds(15), {"serve"},
              {{"MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "not-a-network"}},
              out) == 2);
    CHECK_MESSAGE(out.find("mailassay: invalid configuration: "
                           "MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS") !=
                      std::string::npos,
                  out);
    CHECK(run_binary_within(std::chrono::seconds(15), {"serve"},
                            {{"MAILASSAY_HTTP_TRUSTED_PROXIES", "nowhere"}},
                            out) == 2);
    CHECK_MESSAGE(out.find("mailassay: invalid configuration: "
                           "MAILASSAY_HTTP_TRUSTED_PROXIES") !=
                      std::string::npos,
                  out);
  }

  TEST_CASE("admin commands create organizations and grant credits") {
    auto dir = temp_dir("admin");
    std::map<std::string, std::string> env{
        {"MAILASSAY_DATABASE_URL", "sqlite://" + dir + "/a.db"}};
    std::string out;
    REQUIRE(run_binary({"admin", "create-org", "--name", "Ops Inc", "--email",
                        "ops@example.org", "--password", "operator password",
                        "--credits", "5"},
                       env, out) == 0);
    auto org = json::parse(out.substr(0, out.find('\n')));
    auto id = org["organizationId"].get<std::string>();
    REQUIRE(
        run_binary({"admin", "grant-credits", "--org", id, "--amount", "20"},
                   env, out) == 0);
    CHECK(json::parse(out)["balance"] == 25);
    REQUIRE(run_binary({"admin", "list-orgs", "--json"}, env, out) == 0);
    auto listed = json::parse(out.substr(0, out.find('\n')));
    CHECK(listed["id"] == id);
    CHECK(listed["balance"] == 25);
    CHECK(listed["members"] == 1);
    CHECK(run_binary({"admin", "grant-credits", "--org", "org_missing",
                      "--amount", "1"},
                     env, out) == 1);
    // The owner created by the operator can log in over HTTP.
    server_process srv{
        {{"MAILASSAY_DATABASE_URL", env.at("MAILASSAY_DATABASE_URL")}}};
    api a{srv};
    CHECK(a.post("/v2/auth/login", {{"email", "ops@example.org"},
                                    {"password", "operator password"}})
              .status == 200);
  }
}
