#include "support.hpp"

#include <soci/postgresql/soci-postgresql.h>
#include <soci/soci.h>
#include <soci/sqlite3/soci-sqlite3.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unistd.h>

namespace mailassay::storage::testing {

namespace {

std::atomic<int> counter{0};

std::string unique_suffix() {
  return std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

bool skip_pg() {
  const char* v = std::getenv("MAILASSAY_TEST_SKIP_PG");
  return v != nullptr && std::string{v} == "1";
}

} // namespace

std::string pg_base_url() {
  const char* v = std::getenv("MAILASSAY_TEST_PG_URL");
  return v == nullptr ? std::string{} : std::string{v};
}

void pg_execute(const std::string& sql) {
  auto u = parse_database_url(pg_base_url());
  REQUIRE(u.has_value());
  soci::session s(soci::postgresql, postgres_conninfo(*u));
  s << sql;
}

test_db::test_db(dialect kind, bool open_now) {
  if (kind == dialect::sqlite) {
    // Built with append: GCC 12 warns falsely (-Wrestrict) on "t" + s.
    std::string dir_name = "mailassay-storage-";
    dir_name.append(std::to_string(::getpid()));
    std::string file_name = "t";
    file_name.append(unique_suffix()).append(".db");
    path_ = (std::filesystem::temp_directory_path() / dir_name / file_name)
                .string();
    url_ = "sqlite://" + path_; // absolute path: sqlite:///tmp/...
  } else {
    auto base = pg_base_url();
    if (base.empty()) {
      if (skip_pg()) {
        MESSAGE("PostgreSQL case skipped (MAILASSAY_TEST_SKIP_PG=1)");
        static std::once_flag said;
        std::call_once(said, [] {
          std::fprintf(stderr, "test_storage: PostgreSQL cases skipped "
                               "(MAILASSAY_TEST_SKIP_PG=1)\n");
        });
        skipped_ = true;
        return;
      }
      FAIL("MAILASSAY_TEST_PG_URL is not set: run "
           "`export MAILASSAY_TEST_PG_URL=$(scripts/lib/test-postgres.sh "
           "| tail -n1)` or set MAILASSAY_TEST_SKIP_PG=1 to skip PostgreSQL");
    }
    schema_ = std::make_unique<mailassay::testing::pg_schema>(base);
    url_ = schema_->url();
  }
  if (!open_now)
    return;
  auto opened = open_store(url_);
  if (!opened)
    FAIL("cannot open " << url_ << ": " << opened.error_value().message);
  store_ = std::move(*opened);
}

test_db::~test_db() {
  store_.reset();
  if (!path_.empty()) {
    std::error_code ec;
    for (auto suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_ + suffix, ec);
    // Only succeeds once the last database of this process is gone.
    std::filesystem::remove(std::filesystem::path{path_}.parent_path(), ec);
  }
  schema_.reset(); // after the store: drops the schema
}

long long test_db::query_int(const std::string& sql) const {
  auto u = parse_database_url(url_);
  REQUIRE(u.has_value());
  soci::session s;
  if (u->kind == dialect::sqlite)
    s.open(soci::sqlite3, "db=\"" + u->path + "\"");
  else
    s.open(soci::postgresql, postgres_conninfo(*u));
  long long value = 0;
  s << sql, soci::into(value);
  return value;
}

std::unique_ptr<store> test_db::open_another() const {
  auto opened = open_store(url_);
  REQUIRE_MESSAGE(opened.has_value(), "cannot open " << url_);
  return std::move(*opened);
}

org_fixture make_org(const std::string& id, const std::string& email,
                     acc::unix_time created_at) {
  org_fixture f;
  f.org = {id, "Org " + id, created_at};
  f.owner = make_user("u-" + id, email, created_at);
  return f;
}

acc::user make_user(const std::string& id, const std::string& email,
                    acc::unix_time created_at) {
  return {id, email, "Name " + id, "$argon2id$hash-" + id, created_at};
}

acc::api_key make_key(const std::string& id, const std::string& organization_id,
                      acc::unix_time created_at) {
  acc::api_key k;
  k.id = id;
  k.organization_id = organization_id;
  k.name = "key " + id;
  k.key_hash = "hash-" + id;
  k.prefix = "svc_live_abc\u2026";
  k.allowed_domains = {"example.com", "shop.example.org"};
  k.config.smtp = true;
  k.limits.per_minute = 60;
  k.created_at = created_at;
  k.updated_at = created_at;
  return k;
}

org_fixture create_org(store& s, const std::string& id,
                       const std::string& email, std::int64_t credits) {
  auto f = make_org(id, email);
  auto r = s.create_organization(f.org, f.owner, credits, 1000);
  REQUIRE_MESSAGE(r.has_value(), why(r));
  return f;
}

bool matches(const acc::credit_entry& e, const entry_fields& x) {
  return e.kind == x.kind && (!x.delta || e.delta == *x.delta) &&
         (!x.reference || e.reference == *x.reference) &&
         (!x.balance_after || e.balance_after == *x.balance_after) &&
         (!x.created_at || e.created_at == *x.created_at);
}

std::string describe(const acc::credit_entry& e) {
  return "credit entry kind=" + e.kind + " delta=" + std::to_string(e.delta) +
         " reference=" + e.reference +
         " balance_after=" + std::to_string(e.balance_after) +
         " created_at=" + std::to_string(e.created_at);
}

} // namespace mailassay::storage::testing
