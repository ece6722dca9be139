#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

using namespace mailassay::testing;

namespace {

// Resident memory of a process in kB (VmRSS), or -1.
long rss_kb(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

// The i-th client address of the flood: 10.x.y.z.
std::string flood_ip(int i) {
  return "10." + std::to_string((i >> 16) & 255) + "." +
         std::to_string((i >> 8) & 255) + "." + std::to_string(i & 255);
}

} // namespace

TEST_SUITE("api.limits") {
  // docs/rate-limits.md, "Memory bound and eviction": the validate per-IP
  // table holds at most 100000 buckets, whatever the number of clients.
  // MAILASSAY_TEST_FLOOD_CLIENTS sends another number of client IPs (up to
  // 16 million) for a longer look by hand.
  TEST_CASE("a flood from 150000 client IPs behind a trusted proxy stays "
            "under the memory bound") {
    int clients = 150000;
    if (auto* n = std::getenv("MAILASSAY_TEST_FLOOD_CLIENTS"))
      clients = std::stoi(n);
    constexpr int connections = 4;
    constexpr long bound_kb = 64 * 1024;
    server_process srv{{{"MAILASSAY_HTTP_TRUSTED_PROXIES", "127.0.0.1/32"}}};
    auto before = rss_kb(srv.pid());
    REQUIRE(before > 0);
    std::atomic<int> unexpected{0};
    auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> senders;
    for (int t = 0; t < connections; ++t)
      senders.emplace_back([&, t] {
        http_connection conn{srv.port()};
        // The cheapest request that still takes a token from the client's
        // bucket: no credential, answered 401 after the per-IP check.
        for (int i = t; i < clients; i += connections) {
          auto r = conn.request("POST", "/v2/email/validate",
                                {{"X-Forwarded-For", flood_ip(i)}}, "{}");
          if (r.status != 401 || r.header("ratelimit-remaining") != "99")
            ++unexpected;
        }
      });
    for (auto& s : senders)
      s.join();
    auto seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count();
    auto after = rss_kb(srv.pid());
    MESSAGE("RSS before " << before / 1024 << " MB, after " << clients
                          << " client IPs " << after / 1024 << " MB, "
                          << seconds << " s");
    CHECK(unexpected.load() == 0);
    CHECK(after < bound_kb);
    // Still serving, and the per-IP window still works for a new client.
    auto r = http_request(srv.port(), "POST", "/v2/email/validate",
                          {{"X-Forwarded-For", "192.0.2.1"}}, "{}");
    CHECK(r.status == 401);
    CHECK(r.header("ratelimit-remaining") == "99");
  }
}
