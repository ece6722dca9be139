// An upload's head is decided on before its body is read (issue #28,
// finding 5; docs/security.md, "Uploads"): bad credentials, a key that may
// not upload and an organization with an active job are answered at once,
// and uploads in progress are capped per organization (429). Each case
// sends a head announcing a large body and only its first bytes: an answer
// proves nothing waited for the rest.
#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

namespace {

constexpr const char* zone = R"(
good.test MX 10 mx.good.test
*.slow.test MX 10 mx.slow.test
*.slow.test DELAY 150
)";

// The head of an upload of `bearer` announcing a 5 MB body, and its first
// line.
std::string upload_start(const std::string& bearer,
                         const std::string& origin = "") {
  std::string head = "POST /v2/batch/upload HTTP/1.1\r\nHost: t\r\n"
                     "Content-Type: text/csv\r\nContent-Length: 5000000\r\n";
  if (!origin.empty())
    head += "Origin: " + origin + "\r\n";
  if (!bearer.empty())
    head += "Authorization: Bearer " + bearer + "\r\n";
  return head + "\r\nemail\n";
}

// A connection that sent `bytes` and stays open (an upload whose body is
// still on its way).
struct held_connection {
  int fd = -1;
  held_connection(int port, const std::string& bytes) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  ~held_connection() { close(); }
  void close() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
};

// The status of a raw response, 0 when none.
int status_of(const std::string& raw) {
  if (raw.rfind("HTTP/1.1 ", 0) != 0)
    return 0;
  return std::stoi(raw.substr(9, 3));
}

struct gate_env {
  dns_peer dns;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt, key;

  gate_env() {
    dns.load_zone(zone);
    srv = std::make_unique<server_process>(std::map<std::string, std::string>{
        {"MAILASSAY_DNS_SERVERS", dns.server()},
        {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
        {"MAILASSAY_DNS_TRIES", "1"},
        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
        {"MAILASSAY_BATCH_POLL_MS", "100"},
        {"MAILASSAY_BATCH_MAX_CONCURRENT_UPLOADS_PER_ORGANIZATION", "2"}});
    a = std::make_unique<api>(api{*srv});
    jwt = a->signup("G", unique_email("g"))["accessToken"].get<std::string>();
    key = a->create_key(jwt)["key"].get<std::string>();
  }

  // Sends the start of an upload; returns the whole answer, timing it.
  std::string refused(const std::string& bearer,
                      std::chrono::milliseconds& took,
                      const std::string& origin = "") {
    auto t0 = std::chrono::steady_clock::now();
    auto raw = raw_exchange(srv->port(), upload_start(bearer, origin), 20000);
    took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t0);
    return raw;
  }

  bool reading(double n) {
    return eventually(
        [&] { return a->metric("mailassay_uploads_reading") == n; },
        std::chrono::seconds(10));
  }
};

} // namespace

TEST_SUITE("api.upload_gate") {
  TEST_CASE("no, bad or publishable credentials are refused before the "
            "body is read") {
    gate_env env;
    auto publishable =
        env.a
            ->create_key(env.jwt,
                         {{"name", "widget"},
                          {"allowedDomains", {"shop.example.com"}}})["key"]
            .get<std::string>();
    struct row {
      std::string bearer;
      int status;
      const char* text;
      std::string origin = "";
    };
    for (const auto& r :
         {row{"", 401, "No authorization header"},
          row{"svc_live_not_a_key", 401, "Unauthorized"},
          row{"eyJhbGciOiJIUzI1NiJ9.e30.bad", 401, "Unauthorized"},
          // With the Origin it is restricted to, a publishable key is
          // known, and may not upload.
          row{publishable, 403, "publishable", "https://shop.example.com"}}) {
      CAPTURE(r.bearer);
      std::chrono::milliseconds took{};
      auto raw = env.refused(r.bearer, took, r.origin);
      CHECK(status_of(raw) == r.status);
      CHECK(raw.find(r.text) != std::string::npos);
      // Answered at once: the 5 MB never came and nothing waited for them
      // (the read deadline of a body is 60 s).
      CHECK(took < std::chrono::seconds(10));
    }
    CHECK(env.reading(0));
  }

  TEST_CASE("an organization with an active job gets 409 before the body") {
    gate_env env;
    std::string csv = "email\n";
    for (int i = 0; i < 300; ++i)
      csv += "user" + std::to_string(i) + "@d" + std::to_string(i) +
             ".slow.test\n";
    auto up = env.a->call(
        "POST", "/v2/batch/upload", "", csv,
        {{"Authorization", "Bearer " + env.key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    std::chrono::milliseconds took{};
    auto raw = env.refused(env.key, took);
    CHECK(status_of(raw) == 409);
    CHECK(raw.find("ACTIVE_JOB_EXISTS") != std::string::npos);
    CHECK(took < std::chrono::seconds(10));
    REQUIRE(env.a->call("DELETE", "/v2/batch/" + id, env.key).status == 204);
  }

  TEST_CASE("uploads in progress are capped per organization: 429 with "
            "Retry-After at once, and a finished one frees its slot") {
    gate_env env;
    held_connection first{env.srv->port(), upload_start(env.key)};
    held_connection second{env.srv->port(), upload_start(env.key)};
    // Both were admitted: their bodies are being read.
    REQUIRE(env.reading(2));
    std::chrono::milliseconds took{};
    auto raw = env.refused(env.key, took);
    CHECK(status_of(raw) == 429);
    CHECK(raw.find("Retry-After: 5") != std::string::npos);
    CHECK(raw.find("TOO_MANY_REQUESTS") != std::string::npos);
    CHECK(took < std::chrono::seconds(10));
    // Another organization is not held up by this one.
    auto other =
        env.a->signup("H", unique_email("h"))["accessToken"].get<std::string>();
    auto other_key = env.a->create_key(other)["key"].get<std::string>();
    auto theirs = env.a->call("POST", "/v2/batch/upload", "", "email\nbad@@x\n",
                              {{"Authorization", "Bearer " + other_key},
                               {"Content-Type", "text/csv"}});
    CHECK_MESSAGE(theirs.status == 201, theirs.body);
    // A client that leaves frees its slot; the next upload is read.
    first.close();
    REQUIRE(env.reading(1));
    auto next = env.a->call(
        "POST", "/v2/batch/upload", "", "email\nbad@@x\n",
        {{"Authorization", "Bearer " + env.key}, {"Content-Type", "text/csv"}});
    CHECK_MESSAGE(next.status == 201, next.body);
    second.close();
    CHECK(env.reading(0));
  }
}
