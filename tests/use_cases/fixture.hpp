#pragma once

// What a use case runs with, as a storage worker builds it: a fresh
// database of the current backend, default settings, a key cache, and a
// key ring of one configured secret.

#include "config/settings.hpp"
#include "security/jwt_keyring.hpp"
#include "security/password.hpp"
#include "tests/storage/support.hpp"
#include "use_cases/accounts/key_cache.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace mailassay::use_cases::testing {

namespace uc = use_cases::accounts;

/// One test's world; `now` moves when a test says so.
struct world {
  /// Opens a fresh database of `kind`.
  explicit world(storage::dialect kind) : t(kind) {
    REQUIRE(security::init_crypto());
  }

  storage::testing::test_db t;
  config::settings cfg;
  uc::key_cache keys{1000, 60};
  std::shared_ptr<security::jwt_keyring> jwt =
      security::jwt_keyring::fixed("use-case-tests-secret-of-enough-length");
  std::int64_t now = 1'750'000'000; // 2025-06-15

  /// The environment a storage job would build at `now`.
  uc::account_env env() { return {t.db(), cfg, keys, *jwt, now, nullptr}; }

  /// Signs up `email` (password "correct horse") as the owner of a new
  /// organization; requires success.
  uc::session signup(const std::string& email,
                     const std::string& org = "Acme") {
    auto e = env();
    auto s = uc::signup(e, {org, email, "correct horse", "Owner"});
    REQUIRE_MESSAGE(s.has_value(), storage::testing::why(s));
    return *s;
  }

  /// Authenticates a bearer value as a request carrying it would.
  core::expected<uc::principal> who(const std::string& bearer,
                                    std::string origin_host = {}) {
    auto e = env();
    return uc::authenticate(e, {true, bearer, std::move(origin_host)});
  }

  /// The principal of a session's access token; requires success.
  uc::principal user(const uc::session& s) {
    auto p = who(s.access_token);
    REQUIRE_MESSAGE(p.has_value(), storage::testing::why(p));
    return *p;
  }
};

/// The error code of `r` (requires an error).
template <class T>
core::errc code_of(const core::expected<T>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error_value().code;
}

/// The error message of `r` (requires an error).
template <class T>
std::string message_of(const core::expected<T>& r) {
  REQUIRE_FALSE(r.has_value());
  return r.error_value().message;
}

} // namespace mailassay::use_cases::testing

/// Opens the world of the current backend as `name`, or returns from the
/// test when the backend is skipped.
#define MAILASSAY_USE_CASE_WORLD(name)                                         \
  mailassay::use_cases::testing::world name{TestType::kind};                   \
  if (name.t.skipped())                                                        \
  return
