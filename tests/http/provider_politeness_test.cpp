// Politeness per provider, black-box (issue #30; docs/smtp.md, "Politeness
// per provider"): two MX hosts of one provider, behind one slow SMTP peer,
// and 200 concurrent validations of distinct addresses at two of its
// domains: the peer never sees more sessions at once than the provider's
// budget, the per-host value by default, its own with smtp.provider_limits.
#include "tests/http/smtp_service.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::smtp_peer_options;
using mailassay::tests::peers::smtp_rcpt_behaviour;

namespace {

// Both MX hosts are the slow peer on 127.0.0.48; the table names them one
// provider.
constexpr const char* zone = R"(
mx1.prov.test A 127.0.0.48
mx2.prov.test A 127.0.0.48
one.test MX 10 mx1.prov.test
two.test MX 10 mx2.prov.test
)";

// Runs 200 validations at once (100 per domain); returns the peer's most
// dialogues at once.
std::size_t peak_under_load(const std::map<std::string, std::string>& extra,
                            const char* providers = "prov.test google "
                                                    "mailbox\n") {
  auto table = std::filesystem::temp_directory_path() /
               ("mailassay-politeness-" + unique_email("t") + ".txt");
  std::ofstream(table) << providers;
  smtp_service env;
  smtp_peer_options o;
  o.address = "127.0.0.48";
  o.port = env.mx.port();
  o.hostname = "mx.prov.test";
  // Slow enough that sessions overlap on any machine.
  o.reply_delay = std::chrono::milliseconds(15);
  smtp_peer slow{o};
  slow.add_rule("*", smtp_rcpt_behaviour::accept);
  std::map<std::string, std::string> settings = {
      {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "2"},
      {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
      {"MAILASSAY_SMTP_MAX_RCPTS_PER_SESSION", "5"},
      {"MAILASSAY_SMTP_TLS", "never"},
      // Each SMTP answer costs a credit: room for all 200.
      {"MAILASSAY_CREDITS_SIGNUP_GRANT", "1000"},
      {"MAILASSAY_RISK_PROVIDERS_FILE", table.string()}};
  for (auto& [k, v] : extra)
    settings[k] = v;
  env.start(zone, settings, {}, "Polite");
  // 200 validations of distinct addresses at once, half per domain.
  std::atomic<int> answered{0}, failed{0};
  std::mutex m;
  std::string first_failure;
  std::vector<std::thread> threads;
  for (int n = 0; n < 200; ++n)
    threads.emplace_back([&, n] {
      auto email = "u" + std::to_string(n) + "@" +
                   (n % 2 == 0 ? "one.test" : "two.test");
      auto r = env.a->post(
          "/v2/email/validate",
          {{"email", email}, {"smtp", true}, {"timeout", 30000}}, env.key);
      (r.status == 200 ? answered : failed)++;
      if (r.status != 200) {
        std::lock_guard g{m};
        if (first_failure.empty())
          first_failure = std::to_string(r.status) + " " + r.body;
      }
    });
  for (auto& th : threads)
    th.join();
  CHECK_MESSAGE(answered == 200, first_failure);
  CHECK(failed == 0);
  std::error_code ignored;
  std::filesystem::remove(table, ignored);
  return slow.peak_dialogues();
}

} // namespace

TEST_SUITE("api.smtp.politeness") {
  TEST_CASE("two MX hosts of one provider share the per-host budget") {
    auto peak = peak_under_load({});
    CHECK(peak <= 2);
    CHECK(peak >= 1);
  }

  TEST_CASE("hosts of no provider keep a budget each: the same load opens "
            "more sessions at once") {
    // The control: without a provider the two hosts have 2 each, and this
    // load is enough to pass 2, so the case above tests something.
    auto peak = peak_under_load({}, "elsewhere.test google mailbox\n");
    CHECK(peak > 2);
    CHECK(peak <= 4);
  }

  TEST_CASE("a per-provider override sets the provider's budget") {
    auto peak =
        peak_under_load({{"MAILASSAY_SMTP_PROVIDER_LIMITS", "google=3"}});
    CHECK(peak <= 3);
    CHECK(peak > 2);
  }
}
