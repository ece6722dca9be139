#include "storage/migrations.hpp"

#include <soci/soci.h>

#include <ctime>
#include <set>

namespace mailassay::storage {

namespace {

// Any constant shared by every mailassay process ("MAIL" in ASCII).
constexpr long long migration_lock_key = 0x4d41494c;

} // namespace

// Repetitive by design: each version lists its statements as they ran, and
// tables alike in shape (ids, organization, timestamps) are different
// tables; a migration is never changed once released.
const std::vector<migration>& all_migrations() {
  static const std::vector<migration> list = {
      {1,
       "accounts, keys, credits, usage",
       {
           R"(CREATE TABLE organizations (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at BIGINT NOT NULL))",
           R"(CREATE TABLE users (
            id TEXT PRIMARY KEY,
            email TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            password_hash TEXT NOT NULL,
            created_at BIGINT NOT NULL))",
           // A user belongs to exactly one organization.
           R"(CREATE TABLE memberships (
            user_id TEXT PRIMARY KEY
              REFERENCES users (id) ON DELETE CASCADE,
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            role TEXT NOT NULL
              CHECK (role IN ('owner', 'admin', 'member'))))",
           "CREATE INDEX memberships_by_organization "
           "ON memberships (organization_id)",
           R"(CREATE TABLE refresh_tokens (
            id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            family_id TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            expires_at BIGINT NOT NULL,
            spent INTEGER NOT NULL DEFAULT 0 CHECK (spent IN (0, 1)),
            revoked INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
            created_at BIGINT NOT NULL))",
           "CREATE INDEX refresh_tokens_by_family ON refresh_tokens "
           "(family_id)",
           R"(CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            key_hash TEXT NOT NULL UNIQUE,
            prefix TEXT NOT NULL,
            allowed_domains TEXT NOT NULL DEFAULT '[]',
            smtp INTEGER NOT NULL CHECK (smtp IN (0, 1)),
            disposable INTEGER NOT NULL CHECK (disposable IN (0, 1)),
            role_account INTEGER NOT NULL CHECK (role_account IN (0, 1)),
            enrichment INTEGER NOT NULL CHECK (enrichment IN (0, 1)),
            random_detection INTEGER NOT NULL
              CHECK (random_detection IN (0, 1)),
            per_minute BIGINT CHECK (per_minute >= 0),
            per_hour BIGINT CHECK (per_hour >= 0),
            per_day BIGINT CHECK (per_day >= 0),
            status TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL))",
           "CREATE INDEX api_keys_by_organization "
           "ON api_keys (organization_id, created_at)",
           R"(CREATE TABLE credit_accounts (
            organization_id TEXT PRIMARY KEY
              REFERENCES organizations (id) ON DELETE CASCADE,
            balance BIGINT NOT NULL CHECK (balance >= 0),
            consumed BIGINT NOT NULL DEFAULT 0 CHECK (consumed >= 0),
            updated_at BIGINT NOT NULL))",
           R"(CREATE TABLE credit_ledger (
            id {serial},
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            delta BIGINT NOT NULL,
            kind TEXT NOT NULL,
            reference TEXT NOT NULL DEFAULT '',
            balance_after BIGINT NOT NULL CHECK (balance_after >= 0),
            created_at BIGINT NOT NULL))",
           "CREATE INDEX credit_ledger_by_organization "
           "ON credit_ledger (organization_id, id)",
           R"(CREATE TABLE usage_daily (
            key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            day TEXT NOT NULL,
            requests BIGINT NOT NULL DEFAULT 0 CHECK (requests >= 0),
            successful BIGINT NOT NULL DEFAULT 0 CHECK (successful >= 0),
            credits BIGINT NOT NULL DEFAULT 0 CHECK (credits >= 0),
            PRIMARY KEY (key_id, day)))",
           R"(CREATE TABLE usage_addresses (
            key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
            day TEXT NOT NULL,
            address_hash TEXT NOT NULL,
            PRIMARY KEY (key_id, day, address_hash)))",
       }},
      {2,
       "batch jobs",
       {
           R"(CREATE TABLE batch_jobs (
            id TEXT PRIMARY KEY,
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            status TEXT NOT NULL CHECK (status IN
              ('queued', 'processing', 'completed', 'cancelled', 'failed')),
            file_name TEXT NOT NULL,
            smtp INTEGER NOT NULL CHECK (smtp IN (0, 1)),
            deduplicate INTEGER NOT NULL CHECK (deduplicate IN (0, 1)),
            email_column TEXT NOT NULL,
            total_rows BIGINT NOT NULL CHECK (total_rows >= 0),
            unique_emails BIGINT NOT NULL CHECK (unique_emails >= 0),
            duplicates_removed BIGINT NOT NULL
              CHECK (duplicates_removed >= 0),
            invalid_rows BIGINT NOT NULL CHECK (invalid_rows >= 0),
            processed BIGINT NOT NULL DEFAULT 0 CHECK (processed >= 0),
            count_valid BIGINT NOT NULL DEFAULT 0,
            count_invalid BIGINT NOT NULL DEFAULT 0,
            count_risky BIGINT NOT NULL DEFAULT 0,
            count_unknown BIGINT NOT NULL DEFAULT 0,
            credits_reserved BIGINT NOT NULL DEFAULT 0
              CHECK (credits_reserved >= 0),
            credits_used BIGINT NOT NULL DEFAULT 0 CHECK (credits_used >= 0),
            created_at BIGINT NOT NULL,
            started_at BIGINT,
            finished_at BIGINT,
            lease_owner TEXT NOT NULL DEFAULT '',
            lease_expires_at BIGINT NOT NULL DEFAULT 0))",
           // One active job per organization, also across processes.
           "CREATE UNIQUE INDEX batch_jobs_one_active "
           "ON batch_jobs (organization_id) "
           "WHERE status IN ('queued', 'processing')",
           "CREATE INDEX batch_jobs_by_organization "
           "ON batch_jobs (organization_id, created_at)",
           "CREATE INDEX batch_jobs_by_status "
           "ON batch_jobs (status, created_at)",
           R"(CREATE TABLE batch_items (
            job_id TEXT NOT NULL REFERENCES batch_jobs (id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            email TEXT NOT NULL,
            done INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
            status TEXT NOT NULL DEFAULT '',
            reason TEXT NOT NULL DEFAULT '',
            score INTEGER NOT NULL DEFAULT 0,
            detail TEXT NOT NULL DEFAULT '',
            credits BIGINT NOT NULL DEFAULT 0 CHECK (credits >= 0),
            PRIMARY KEY (job_id, seq)){without_rowid})",
       }},
      {3,
       "usage by organization",
       {
           // The dashboard's organization-wide usage (GET /v2/usage) reads
           // a window of days of every key of one organization.
           "CREATE INDEX usage_daily_by_organization "
           "ON usage_daily (organization_id, day)",
       }},
      {4,
       "access-token signing keys",
       {
           // One deployment-wide key signs (state 'current'); retired keys
           // still verify the tokens they signed until these expire.
           R"(CREATE TABLE signing_keys (
            kid TEXT PRIMARY KEY,
            secret TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('current', 'retired')),
            created_at BIGINT NOT NULL,
            retired_at BIGINT NOT NULL DEFAULT 0))",
           // At most one signing key, also when processes start at once.
           "CREATE UNIQUE INDEX signing_keys_one_current "
           "ON signing_keys (state) WHERE state = 'current'",
       }},
      {5,
       "webhooks",
       {
           // docs/webhooks.md. The signing secrets are sealed with the
           // server key (never stored in clear, never only hashed: an HMAC
           // needs them).
           R"(CREATE TABLE webhooks (
            id TEXT PRIMARY KEY,
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            url TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            events TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
            secret TEXT NOT NULL,
            previous_secret TEXT NOT NULL DEFAULT '',
            previous_secret_expires_at BIGINT NOT NULL DEFAULT 0,
            credits_low_threshold BIGINT NOT NULL DEFAULT 0
              CHECK (credits_low_threshold >= 0),
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL))",
           "CREATE INDEX webhooks_by_organization "
           "ON webhooks (organization_id, created_at)",
           // The outbox: one row per event and endpoint, written in the
           // transaction of the change it reports. Times in milliseconds.
           R"(CREATE TABLE webhook_deliveries (
            id TEXT PRIMARY KEY,
            webhook_id TEXT NOT NULL
              REFERENCES webhooks (id) ON DELETE CASCADE,
            organization_id TEXT NOT NULL,
            event TEXT NOT NULL,
            subject_id TEXT NOT NULL DEFAULT '',
            balance BIGINT NOT NULL DEFAULT 0,
            threshold BIGINT NOT NULL DEFAULT 0,
            created_ms BIGINT NOT NULL,
            status TEXT NOT NULL
              CHECK (status IN ('pending', 'delivered', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            next_attempt_ms BIGINT NOT NULL,
            last_status_code INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            delivered_ms BIGINT NOT NULL DEFAULT 0,
            lease_owner TEXT NOT NULL DEFAULT '',
            lease_expires_ms BIGINT NOT NULL DEFAULT 0))",
           "CREATE INDEX webhook_deliveries_due "
           "ON webhook_deliveries (status, next_attempt_ms)",
           "CREATE INDEX webhook_deliveries_by_webhook "
           "ON webhook_deliveries (webhook_id, created_ms)",
           R"(CREATE TABLE webhook_attempts (
            delivery_id TEXT NOT NULL
              REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
            number INTEGER NOT NULL CHECK (number >= 1),
            at_ms BIGINT NOT NULL,
            duration_ms BIGINT NOT NULL,
            status_code INTEGER NOT NULL DEFAULT 0,
            error TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (delivery_id, number)){without_rowid})",
           // At most one successful attempt per delivery, whatever two
           // processes believe about their leases.
           "CREATE UNIQUE INDEX webhook_attempts_one_success "
           "ON webhook_attempts (delivery_id) "
           "WHERE status_code >= 200 AND status_code <= 299",
       }},
      {6,
       "sandbox batch jobs",
       {
           // A job uploaded with a test key runs in the sandbox
           // (core/validation/sandbox.hpp), also after a restart.
           "ALTER TABLE batch_jobs ADD COLUMN sandbox INTEGER NOT NULL "
           "DEFAULT 0 CHECK (sandbox IN (0, 1))",
       }},
      {7,
       "batch job restarts and errors",
       {
           // Take-overs from dead owners in a row without progress: a job
           // that keeps killing its process fails instead of looping
           // (docs/batch.md, "Poison jobs").
           "ALTER TABLE batch_jobs ADD COLUMN restarts INTEGER NOT NULL "
           "DEFAULT 0 CHECK (restarts >= 0)",
           // Why a failed job failed ('' while it has not).
           "ALTER TABLE batch_jobs ADD COLUMN error_code TEXT NOT NULL "
           "DEFAULT ''",
           "ALTER TABLE batch_jobs ADD COLUMN error_message TEXT NOT NULL "
           "DEFAULT ''",
       }},
      {8,
       "batch retention",
       {
           // When the retention sweeper erased a finished job's rows (NULL
           // while they are kept); setting it is the claim that lets one
           // process of a cluster do each erase (docs/privacy.md).
           "ALTER TABLE batch_jobs ADD COLUMN results_erased_at BIGINT",
           // The sweeper's question per organization: its finished jobs
           // not erased yet, oldest finish first.
           "CREATE INDEX batch_jobs_unerased ON batch_jobs "
           "(organization_id, finished_at) WHERE results_erased_at IS NULL",
           // An owner's shorter retention (NULL: the server's).
           "ALTER TABLE organizations ADD COLUMN batch_retention_seconds "
           "BIGINT CHECK (batch_retention_seconds > 0)",
       }},
      {11,
       "webhook deliveries by organization",
       {
           // POST /v2/webhooks/{id}/test counts the organization's recent
           // pings and its pending deliveries in its transaction
           // (core/webhooks/ping_limits.hpp): two index reads, not scans.
           "CREATE INDEX webhook_deliveries_by_organization "
           "ON webhook_deliveries (organization_id, event, created_ms)",
           "CREATE INDEX webhook_deliveries_pending_by_organization "
           "ON webhook_deliveries (organization_id) WHERE status = 'pending'",
       }},
      {12,
       "audit log",
       {
           // Who changed what in an organization (docs/privacy.md, "Audit
           // log"); goes with the organization and follows its retention.
           R"(CREATE TABLE audit_log (
            id {serial},
            organization_id TEXT NOT NULL
              REFERENCES organizations (id) ON DELETE CASCADE,
            at BIGINT NOT NULL,
            action TEXT NOT NULL,
            actor_type TEXT NOT NULL
              CHECK (actor_type IN ('user', 'api_key', 'operator')),
            actor_id TEXT NOT NULL,
            target TEXT NOT NULL DEFAULT '',
            ip TEXT NOT NULL DEFAULT '',
            details TEXT NOT NULL DEFAULT '{}',
            occurrences BIGINT NOT NULL DEFAULT 1
              CHECK (occurrences >= 1)))",
           "CREATE INDEX audit_log_by_organization "
           "ON audit_log (organization_id, id)",
           // The retention sweep's question: entries older than a cutoff.
           "CREATE INDEX audit_log_by_time ON audit_log (organization_id, at)",
       }},
  };
  return list;
}

namespace {

void replace_all(std::string& text, std::string_view token,
                 std::string_view by) {
  for (auto pos = text.find(token); pos != std::string::npos;
       pos = text.find(token, pos + by.size()))
    text.replace(pos, token.size(), by);
}

} // namespace

std::string dialect_sql(std::string_view statement, dialect d) {
  std::string out{statement};
  bool lite = d == dialect::sqlite;
  replace_all(out, "{serial}",
              lite ? "INTEGER PRIMARY KEY AUTOINCREMENT"
                   : "BIGSERIAL PRIMARY KEY");
  // A table keyed by its primary key alone, stored in that key's b-tree
  // (SQLite keeps one b-tree instead of a rowid table plus an index).
  replace_all(out, "{without_rowid}", lite ? " WITHOUT ROWID" : "");
  return out;
}

int schema_version(soci::session& sql) {
  int version = 0;
  soci::indicator ind = soci::i_null;
  sql << "SELECT MAX(version) FROM schema_migrations", soci::into(version, ind);
  return ind == soci::i_ok ? version : 0;
}

void apply_migrations(soci::session& sql, dialect d,
                      const std::string& schema) {
  sql << (d == dialect::sqlite ? "BEGIN IMMEDIATE" : "BEGIN");
  try {
    if (d == dialect::postgresql) {
      // Two processes starting at once: the second waits here, then sees
      // the first one's versions.
      sql << "SELECT pg_advisory_xact_lock(" +
                 std::to_string(migration_lock_key) + ")";
      if (!schema.empty())
        sql << "CREATE SCHEMA IF NOT EXISTS " + schema;
    }
    sql << "CREATE TABLE IF NOT EXISTS schema_migrations ("
           "version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
           "applied_at BIGINT NOT NULL)";
    std::set<int> applied;
    {
      int version = 0;
      soci::statement st = (sql.prepare << "SELECT version FROM "
                                           "schema_migrations",
                            soci::into(version));
      st.execute();
      while (st.fetch())
        applied.insert(version);
    }
    for (const auto& m : all_migrations()) {
      if (applied.count(m.version) != 0)
        continue;
      for (auto statement : m.statements)
        sql << dialect_sql(statement, d);
      long long now = static_cast<long long>(std::time(nullptr));
      std::string name{m.name};
      sql << "INSERT INTO schema_migrations (version, name, applied_at) "
             "VALUES (:v, :n, :t)",
          soci::use(m.version), soci::use(name), soci::use(now);
    }
    sql << "COMMIT";
  } catch (...) {
    try {
      sql << "ROLLBACK";
    } catch (...) {
      // The connection may be gone; the server rolls back on its own.
    }
    throw;
  }
}

} // namespace mailassay::storage
