#include "storage/soci_store.hpp"

#include "os/private_files.hpp"
#include "storage/migrations.hpp"

#include <soci/postgresql/soci-postgresql.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>

namespace mailassay::storage {

namespace {

using core::errc;
using core::make_error;

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// SOCI's SQLite backend reads `db=value` up to the next space unless the
// value is quoted.
std::string sqlite_connect_string(const std::string& path) {
  std::string out = "db=\"";
  for (char c : path) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\" timeout=10";
}

// Switches `sql`'s SQLite file to WAL (kept in the file: a no-op once done).
// Switching a new file takes its exclusive lock, and when two connections
// switch it at once (processes or storage workers starting together) SQLite
// may answer one SQLITE_BUSY at once rather than wait out the busy timeout
// (they would deadlock): that one tries again, for as long as the timeout.
void enter_wal(soci::session& sql) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      sql << "PRAGMA journal_mode = WAL";
      return;
    } catch (const soci::sqlite3_soci_error& e) {
      constexpr int sqlite_busy = 5;
      if ((e.result() & 0xff) != sqlite_busy ||
          std::chrono::steady_clock::now() > until)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

} // namespace

core::error to_error(const std::exception& e, dialect d) {
  std::string text = e.what();
  if (auto pg = dynamic_cast<const soci::postgresql_soci_error*>(&e)) {
    auto state = pg->sqlstate();
    if (state == "23505")
      return make_error(errc::conflict, "already exists: " + text);
    if (state == "23503")
      return make_error(errc::not_found, "referenced row not found: " + text);
    // Class 08: connection exception; 57P01-03: server shutting down.
    if (state.starts_with("08") || state.starts_with("57P"))
      return make_error(errc::unavailable, "database unavailable: " + text);
  }
  if (auto lite = dynamic_cast<const soci::sqlite3_soci_error*>(&e)) {
    // SQLITE_CONSTRAINT covers unique, foreign key and check violations.
    if (lite->result() == 19 && (contains(text, "UNIQUE constraint") ||
                                 contains(text, "PRIMARY KEY constraint")))
      return make_error(errc::conflict, "already exists: " + text);
    if (lite->result() == 19 && contains(text, "FOREIGN KEY constraint"))
      return make_error(errc::not_found, "referenced row not found: " + text);
    // SQLITE_BUSY, SQLITE_LOCKED (after the busy timeout), SQLITE_CANTOPEN.
    if (lite->result() == 5 || lite->result() == 6 || lite->result() == 14)
      return make_error(errc::unavailable, "database unavailable: " + text);
  }
  if (auto soci_e = dynamic_cast<const soci::soci_error*>(&e)) {
    if (soci_e->get_error_category() == soci::soci_error::connection_error)
      return make_error(errc::unavailable, "database unavailable: " + text);
    // libpq errors raised before any statement carry no sqlstate.
    if (d == dialect::postgresql &&
        (contains(text, "server closed the connection") ||
         contains(text, "no connection to the server") ||
         contains(text, "Cannot establish connection") ||
         contains(text, "could not connect") ||
         contains(text, "connection to server")))
      return make_error(errc::unavailable, "database unavailable: " + text);
  }
  return make_error(errc::internal, "database error: " + text);
}

bool is_unique_violation(const std::exception& e, std::string_view pg_name,
                         std::string_view sqlite_columns) {
  std::string_view text = e.what();
  if (auto pg = dynamic_cast<const soci::postgresql_soci_error*>(&e))
    return pg->sqlstate() == "23505" &&
           contains(text, "\"" + std::string{pg_name} + "\"");
  if (auto lite = dynamic_cast<const soci::sqlite3_soci_error*>(&e))
    return lite->result() == 19 &&
           contains(text,
                    "UNIQUE constraint failed: " + std::string{sqlite_columns});
  return false;
}

soci_store::soci_store(const database_url& url)
    : url_(url), channel_(notify_channel(url)) {
  if (url_.kind == dialect::sqlite) {
    sql_.open(soci::sqlite3, sqlite_connect_string(url_.path));
    // WAL lets readers run beside the single writer; the busy timeout
    // (timeout=10 above) makes writers queue instead of failing.
    enter_wal(sql_);
    sql_ << "PRAGMA synchronous = NORMAL";
    sql_ << "PRAGMA foreign_keys = ON";
    sql_ << "PRAGMA busy_timeout = 10000";
    // An erase overwrites what it deletes (docs/privacy.md): no deleted
    // address stays readable in the file's free pages.
    sql_ << "PRAGMA secure_delete = ON";
  } else {
    sql_.open(soci::postgresql, postgres_conninfo(url_));
  }
}

void soci_store::after_erase() {
  if (url_.kind != dialect::sqlite)
    return;
  try {
    int busy = 0, frames = 0, copied = 0;
    sql_ << "PRAGMA wal_checkpoint(TRUNCATE)", soci::into(busy),
        soci::into(frames), soci::into(copied);
  } catch (const std::exception&) {
    // The erase itself is committed; the next checkpoint copies it.
  }
}

void soci_store::migrate() {
  apply_migrations(sql_, url_.kind, url_.schema);
}

std::string soci_store::backend_name() const {
  return url_.kind == dialect::sqlite ? "sqlite" : "postgresql";
}

void soci_store::ensure_connected() {
  if (url_.kind == dialect::postgresql && !sql_.is_connected())
    sql_.reconnect();
}

expected<unit> soci_store::ping() {
  return run<unit>(true, [&] {
    int one = 0;
    sql_ << "SELECT 1", soci::into(one);
    return unit{};
  });
}

expected<std::int64_t> soci_store::database_now() {
  return run<std::int64_t>(true, [&] { return db_clock(); });
}

expected<std::int64_t> soci_store::listening_processes() {
  if (url_.kind != dialect::postgresql)
    return std::int64_t{0};
  return run<std::int64_t>(true, [&] {
    // Sessions of the same role see each other's application_name.
    long long n = 0;
    auto name = listener_application_name(url_);
    sql_ << "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            "current_database() AND application_name = :n",
        soci::use(name), soci::into(n);
    return static_cast<std::int64_t>(n);
  });
}

std::int64_t soci_store::db_clock() {
  long long now = 0;
  if (url_.kind == dialect::sqlite)
    sql_ << "SELECT CAST(strftime('%s', 'now') AS INTEGER)", soci::into(now);
  else
    sql_ << "SELECT CAST(FLOOR(EXTRACT(EPOCH FROM now())) AS BIGINT)",
        soci::into(now);
  return now;
}

std::int64_t soci_store::time_of(std::int64_t now) {
  return now == database_clock ? db_clock() : now;
}

void soci_store::notify(change_kind kind, const std::string& id) {
  if (url_.kind != dialect::postgresql)
    return;
  auto payload = encode_change(change{kind, id});
  // pg_notify takes the channel as a value; it is delivered at COMMIT and
  // dropped with a ROLLBACK.
  sql_ << "SELECT pg_notify(:c, :p)", soci::use(channel_), soci::use(payload);
}

soci_store::transaction::transaction(soci_store& owner) : owner_(owner) {
  const char* begin =
      owner_.url_.kind == dialect::sqlite ? "BEGIN IMMEDIATE" : "BEGIN";
  try {
    owner_.sql_ << begin;
  } catch (const soci::soci_error&) {
    // Nothing was written yet, so one retry on a fresh connection is safe.
    if (owner_.url_.kind != dialect::postgresql || owner_.sql_.is_connected())
      throw;
    owner_.sql_.reconnect();
    owner_.sql_ << begin;
  }
}

soci_store::transaction::~transaction() {
  if (!open_)
    return;
  try {
    owner_.sql_ << "ROLLBACK";
  } catch (...) {
    // A lost connection rolls back on the server side.
  }
}

void soci_store::transaction::commit() {
  owner_.sql_ << "COMMIT";
  open_ = false;
}

expected<std::unique_ptr<store>> open_store(const std::string& url) {
  auto parsed = parse_database_url(url);
  if (!parsed)
    return parsed.error_value();
  const auto& u = *parsed;
  // The database holds customers' addresses and sealed secrets: its folder
  // is made 0700 and its files 0600 (SQLite creates -wal and -shm with the
  // main file's mode, and the umask covers what it creates meanwhile).
  std::optional<os::private_umask> private_files;
  if (u.kind == dialect::sqlite) {
    auto parent = std::filesystem::path{u.path}.parent_path().string();
    auto why = os::make_private_directories(parent);
    if (why.empty())
      why = os::touch_private_file(u.path);
    if (!why.empty())
      return make_error(errc::unavailable, why);
    private_files.emplace();
  }
  try {
    auto s = std::make_unique<soci_store>(u);
    s->migrate();
    return std::unique_ptr<store>{std::move(s)};
  } catch (const soci::soci_error& e) {
    auto err = to_error(e, u.kind);
    if (err.code == errc::internal && u.kind == dialect::postgresql &&
        std::string_view{e.what()}.find("connect") != std::string_view::npos)
      err.code = errc::unavailable;
    err.message = "cannot open " + describe(u) + ": " + err.message;
    return err;
  } catch (const std::exception& e) {
    return make_error(errc::internal,
                      "cannot open " + describe(u) + ": " + e.what());
  }
}

} // namespace mailassay::storage
