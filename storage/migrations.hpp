#pragma once

#include "storage/url.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace soci {
class session;
}

namespace mailassay::storage {

/// One schema version: statements run in order inside one transaction.
/// `{serial}` in a statement becomes the dialect's auto-increment key;
/// `{without_rowid}` after a CREATE TABLE becomes " WITHOUT ROWID" on SQLite
/// and nothing on PostgreSQL.
struct migration {
  int version;
  std::string_view name;
  std::vector<std::string_view> statements;
};

/// Every migration, oldest first. Append only; never edit a shipped one.
const std::vector<migration>& all_migrations();

/// Returns `statement` with dialect placeholders replaced.
std::string dialect_sql(std::string_view statement, dialect d);

/// Applies the pending migrations, each recorded in `schema_migrations`.
/// Serialized across processes (SQLite: BEGIN IMMEDIATE; PostgreSQL: an
/// advisory transaction lock). Throws soci::soci_error on failure.
void apply_migrations(soci::session& sql, dialect d, const std::string& schema);

/// Returns the highest applied version (0 when none).
int schema_version(soci::session& sql);

} // namespace mailassay::storage
