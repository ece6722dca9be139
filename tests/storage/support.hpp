#pragma once

#include "storage/store.hpp"
#include "storage/url.hpp"
#include "tests/support/pg_schema.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>

namespace mailassay::storage::testing {

/// Tag types: every behaviour test runs once per backend.
struct sqlite_backend {
  static constexpr dialect kind = dialect::sqlite;
};
struct postgresql_backend {
  static constexpr dialect kind = dialect::postgresql;
};

#define MAILASSAY_STORAGE_BACKENDS                                             \
  mailassay::storage::testing::sqlite_backend,                                 \
      mailassay::storage::testing::postgresql_backend

/// A fresh, empty database for one test: a new SQLite file, or a new
/// PostgreSQL schema inside $MAILASSAY_TEST_PG_URL; removed afterwards.
/// Without that variable the PostgreSQL cases fail, unless
/// MAILASSAY_TEST_SKIP_PG=1 (then `skipped()` is true).
class test_db {
public:
  /// `open_now` = false leaves the database unmigrated (no store yet).
  explicit test_db(dialect kind, bool open_now = true);
  ~test_db();
  test_db(const test_db&) = delete;
  test_db& operator=(const test_db&) = delete;

  /// Whether this backend is skipped; the test should return.
  bool skipped() const { return skipped_; }

  /// The URL of this database.
  const std::string& url() const { return url_; }

  /// The store opened at construction (only when `open_now`).
  store& db() { return *store_; }

  /// Runs a query returning one integer on a raw connection to this
  /// database (to look at what the store interface does not show).
  long long query_int(const std::string& sql) const;

  /// Opens another store (another connection) on the same database.
  std::unique_ptr<store> open_another() const;

private:
  bool skipped_ = false;
  std::string url_;
  std::string path_;                                      // SQLite file
  std::unique_ptr<mailassay::testing::pg_schema> schema_; // PostgreSQL
  std::unique_ptr<store> store_;
};

/// Returns $MAILASSAY_TEST_PG_URL, or "" when unset.
std::string pg_base_url();

/// Runs one SQL statement on the PostgreSQL test database (test plumbing
/// such as killing a connection); throws on failure.
void pg_execute(const std::string& sql);

namespace acc = core::account;

/// The error message of `r`, or "" when it holds a value (safe in the lazy
/// messages of REQUIRE_MESSAGE, which doctest may render on success).
template <class T>
std::string why(const core::expected<T>& r) {
  return r ? std::string{} : r.error_value().message;
}

/// An organization `id` with owner `owner_id` <`email`>.
struct org_fixture {
  acc::organization org;
  acc::user owner;
};

/// Builds an organization and its owner (not stored).
org_fixture make_org(const std::string& id, const std::string& email,
                     acc::unix_time created_at = 1000);

/// Builds a user (not stored).
acc::user make_user(const std::string& id, const std::string& email,
                    acc::unix_time created_at = 1000);

/// Builds an API key of `organization_id` (not stored).
acc::api_key make_key(const std::string& id, const std::string& organization_id,
                      acc::unix_time created_at = 2000);

/// Creates an organization with `credits` and returns it.
org_fixture create_org(store& s, const std::string& id,
                       const std::string& email, std::int64_t credits = 0);

/// The fields a test expects of one credit ledger entry; those left unset
/// are not compared.
struct entry_fields {
  std::string kind{};
  std::optional<std::int64_t> delta{};
  std::optional<std::string> reference{};
  std::optional<std::int64_t> balance_after{};
  std::optional<acc::unix_time> created_at{};
};

/// Whether `e` has every field that `x` sets.
bool matches(const acc::credit_entry& e, const entry_fields& x);

/// `e` as text, for a failed check's message.
std::string describe(const acc::credit_entry& e);

} // namespace mailassay::storage::testing

TYPE_TO_STRING_AS("sqlite", mailassay::storage::testing::sqlite_backend);
TYPE_TO_STRING_AS("postgresql",
                  mailassay::storage::testing::postgresql_backend);

/// Opens a fresh database for the current backend as `name`, or returns
/// from the test when the backend is skipped.
#define MAILASSAY_TEST_DB(name)                                                \
  mailassay::storage::testing::test_db name{TestType::kind};                   \
  if (name.skipped())                                                          \
  return

/// MAILASSAY_TEST_DB(name), with `store_ref` naming the store it opened.
#define MAILASSAY_TEST_STORE(name, store_ref)                                  \
  MAILASSAY_TEST_DB(name);                                                     \
  auto& store_ref = name.db()

/// Checks that credit entry `e` has the fields in braces, e.g.
/// `CHECK_ENTRY(e, {"batch_refund", 7, "j1", 97, 1003})` (kind, delta,
/// reference, balance after, time), or `{.kind = "signup", .delta = 100}`.
#define CHECK_ENTRY(e, ...)                                                    \
  CHECK_MESSAGE(mailassay::storage::testing::matches(                          \
                    e, mailassay::storage::testing::entry_fields __VA_ARGS__), \
                mailassay::storage::testing::describe(e))
