#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/expected.hpp"

namespace mailassay::config {

/// `[http]`: the listening socket and request limits.
struct http_settings {
  std::string address = "0.0.0.0";
  std::uint16_t port = 3000;
  int io_threads = 1;
  std::int64_t max_body_bytes = 1024 * 1024; ///< JSON bodies; larger -> 413.
  std::vector<std::string> trusted_proxies;  ///< Peers whose XFF we trust.
  std::int64_t request_timeout_ms = 40000;
};

/// `[database]`: where rows live.
struct database_settings {
  std::string url = "sqlite://data/mailassay.db";
};

/// `[auth]`: tokens and sign-up.
struct auth_settings {
  std::string jwt_secret; ///< Empty: generated and kept in `jwt_secret_file`.
  std::string jwt_secret_file = "data/jwt.secret";
  bool signup_enabled = true;
  std::int64_t access_ttl_seconds = 900;
  std::int64_t refresh_ttl_seconds = 30 * 24 * 3600;
  std::int64_t key_cache_seconds = 5; ///< How stale another process may be.
};

/// `[credits]`.
struct credits_settings {
  std::int64_t signup_grant = 100;
};

/// `[log]`.
struct log_settings {
  std::string level = "info";
};

/// `[limits]`: rate limits (the limiter itself arrives with its issue).
struct limits_settings {
  std::int64_t ip_per_minute = 100;
  /// Limits a new key gets when its creation names none; 0 = unlimited.
  std::int64_t key_per_minute = 0;
  std::int64_t key_per_hour = 0;
  std::int64_t key_per_day = 0;
};

/// `[actors]`: pool sizes.
struct actors_settings {
  int scheduler_threads = 2;
  int storage_workers = 4;
};

/// `[dns]`: the resolver and its cache (see docs/dns.md).
struct dns_settings {
  std::vector<std::string> servers; ///< Empty: /etc/resolv.conf.
  std::int64_t timeout_ms = 2000;
  int tries = 2;
  std::int64_t max_inflight = 256;
  std::int64_t cache_size = 100000;
  std::int64_t min_ttl = 0;
  std::int64_t max_ttl = 86400;
  std::int64_t negative_ttl = 300;
  std::int64_t error_ttl = 5;
};

/// `[validation]`.
struct validation_settings {
  bool allow_test_domains = false; ///< Accept RFC 6761 special-use domains.
  int workers = 2;                 ///< Validation actors.
};

/// `[risk]`: where the risk lists come from.
struct risk_settings {
  std::string data_dir = "data/risk";
  std::string extra_disposable_file;
  std::string extra_free_file;
  std::string extra_roles_file;
};

/// All settings, loaded once at start-up and passed by section.
struct settings {
  http_settings http;
  database_settings database;
  auth_settings auth;
  credits_settings credits;
  log_settings log;
  limits_settings limits;
  actors_settings actors;
  dns_settings dns;
  validation_settings validation;
  risk_settings risk;
};

/// Environment variables as name -> value.
using environment = std::map<std::string, std::string>;

/// Reads the process environment.
environment process_environment();

/// Loads defaults, then the file at `path` (if given), then every
/// `MAILASSAY_<SECTION>_<KEY>` variable of `env`. Any unknown key or bad value
/// -> errc::bad_request with a message naming the key and what is wrong.
core::expected<settings> load(const std::optional<std::string>& path,
                              const environment& env);

/// Describes one setting for documentation and `--help`.
struct key_doc {
  std::string section;
  std::string key;
  std::string env_name;
  std::string default_value;
  std::string description;
};

/// Lists every setting with its default and variable.
std::vector<key_doc> describe();

} // namespace mailassay::config
