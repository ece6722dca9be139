#include "config/settings.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::config;

TEST_SUITE("config.smtp") {
  TEST_CASE("defaults probe port 25 with opportunistic TLS and no private "
            "targets") {
    auto s = load(std::nullopt, {});
    REQUIRE(s.has_value());
    const auto& smtp = s->smtp;
    CHECK(smtp.helo.empty());
    CHECK(smtp.mail_from.empty());
    CHECK_FALSE(smtp.force_identity);
    CHECK(smtp.port == 25);
    CHECK(smtp.tls == mailassay::core::smtp::tls_policy::opportunistic);
    CHECK(smtp.allow_private_targets.empty());
    CHECK(smtp.retry_delays_ms ==
          std::vector<std::int64_t>{5000, 15000, 45000});
    CHECK(smtp.max_sessions_per_host == 4);
    CHECK(smtp.catch_all_ttl_seconds == 86400);
    CHECK(smtp.socks5_proxy.empty());
  }

  TEST_CASE("reads every SMTP variable") {
    environment env{
        {"MAILASSAY_SMTP_HELO", "probe.example.io"},
        {"MAILASSAY_SMTP_MAIL_FROM", "verify@example.io"},
        {"MAILASSAY_SMTP_FORCE_IDENTITY", "true"},
        {"MAILASSAY_SMTP_PORT", "2525"},
        {"MAILASSAY_SMTP_TLS", "required"},
        {"MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8, fd00::/8"},
        {"MAILASSAY_SMTP_RETRY_DELAYS_MS", "300, 600"},
        {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "2"},
        {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "5"},
        {"MAILASSAY_SMTP_CATCH_ALL_TTL_SECONDS", "60"},
        {"MAILASSAY_SMTP_SOCKS5_PROXY", "127.0.0.1:1080"},
    };
    auto s = load(std::nullopt, env);
    REQUIRE(s.has_value());
    const auto& smtp = s->smtp;
    CHECK(smtp.helo == "probe.example.io");
    CHECK(smtp.mail_from == "verify@example.io");
    CHECK(smtp.force_identity);
    CHECK(smtp.port == 2525);
    CHECK(smtp.tls == mailassay::core::smtp::tls_policy::required);
    CHECK(smtp.allow_private_targets ==
          std::vector<std::string>{"127.0.0.0/8", "fd00::/8"});
    CHECK(smtp.retry_delays_ms == std::vector<std::int64_t>{300, 600});
    CHECK(smtp.max_sessions_per_host == 2);
    CHECK(smtp.connections_per_second_per_host == 5);
    CHECK(smtp.catch_all_ttl_seconds == 60);
    CHECK(smtp.socks5_proxy == "127.0.0.1:1080");
  }

  TEST_CASE("refuses bad SMTP values naming the variable") {
    const std::pair<const char*, const char*> rows[] = {
        {"MAILASSAY_SMTP_TLS", "sometimes"},
        {"MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8,10.0.0.0/40"},
        {"MAILASSAY_SMTP_RETRY_DELAYS_MS", "5000,soon"},
        {"MAILASSAY_SMTP_RETRY_DELAYS_MS", "0"},
        {"MAILASSAY_SMTP_SOCKS5_PROXY", "proxy.example.org:1080"},
        {"MAILASSAY_SMTP_SOCKS5_PROXY", "127.0.0.1"},
        {"MAILASSAY_SMTP_PORT", "0"},
    };
    for (auto [name, value] : rows) {
      CAPTURE(name);
      CAPTURE(value);
      auto s = load(std::nullopt, {{name, value}});
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error_value().message.find(name) != std::string::npos);
    }
  }
}
