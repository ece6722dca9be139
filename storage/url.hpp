#pragma once

#include "core/base/expected.hpp"

#include <cstdint>
#include <string>

namespace mailassay::storage {

/// Which SQL dialect a database speaks.
enum class dialect { sqlite, postgresql };

/// A parsed database URL.
struct database_url {
  dialect kind = dialect::sqlite;
  /// SQLite: the file path as written (absolute or relative to the cwd).
  std::string path;
  /// PostgreSQL connection fields, percent-decoded; empty = libpq default.
  std::string host;
  std::string port;
  std::string user;
  std::string password;
  std::string dbname;
  /// PostgreSQL `?schema=name`: tables live in this schema (created at open).
  std::string schema;
};

/// Parses `sqlite:///abs/path.db`, `sqlite://relative/path.db` or
/// `postgresql://[user[:password]@]host[:port]/dbname[?schema=name]`
/// (`postgres://` also accepted). Malformed -> errc::bad_request.
core::expected<database_url> parse_database_url(const std::string& url);

/// Returns a libpq keyword/value connection string for `u`.
std::string postgres_conninfo(const database_url& u);

/// Returns `u` without its password, for messages.
std::string describe(const database_url& u);

} // namespace mailassay::storage
