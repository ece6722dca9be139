#pragma once

#include "storage/notify.hpp"
#include "storage/store.hpp"
#include "storage/url.hpp"

#include <soci/soci.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace mailassay::storage {

/// Turns an exception thrown by SOCI (or anything else) into an `error`:
/// duplicate key -> conflict, missing referenced row -> not_found, lost
/// connection -> unavailable, the rest -> internal.
core::error to_error(const std::exception& e, dialect d);

/// Returns whether `e` is a unique violation of one given constraint:
/// PostgreSQL names it (`pg_name`, the constraint or unique index), SQLite
/// names the columns (`sqlite_columns`, as "table.column").
bool is_unique_violation(const std::exception& e, std::string_view pg_name,
                         std::string_view sqlite_columns);

/// The `store` over one SOCI session, for SQLite and PostgreSQL.
class soci_store final : public store {
public:
  /// Connects (throws soci::soci_error); does not migrate.
  explicit soci_store(const database_url& url);

  /// Applies pending migrations (throws soci::soci_error).
  void migrate();

  std::string backend_name() const override;
  expected<unit> ping() override;
  expected<std::int64_t> database_now() override;
  expected<std::int64_t> listening_processes() override;

  expected<std::vector<acc::signing_key>>
  ensure_signing_key(const acc::signing_key& candidate) override;
  expected<std::vector<acc::signing_key>> signing_keys() override;
  expected<std::vector<acc::signing_key>>
  rotate_signing_key(const acc::signing_key& next,
                     std::int64_t keep_seconds) override;
  expected<bool> seal_signing_key(const std::string& kid,
                                  const std::string& plain,
                                  const std::string& sealed) override;

  expected<unit> create_organization(const acc::organization& org,
                                     const acc::user& owner,
                                     std::int64_t initial_credits,
                                     acc::unix_time now) override;
  expected<unit> add_member(const std::string& organization_id,
                            const acc::user& person, acc::role r) override;
  expected<acc::member> find_member_by_email(const std::string& email) override;
  expected<acc::member> find_member(const std::string& user_id) override;
  expected<acc::organization>
  get_organization(const std::string& organization_id) override;
  expected<std::vector<acc::organization_summary>>
  list_organizations() override;
  expected<std::vector<acc::member>>
  list_members(const std::string& organization_id) override;
  expected<acc::organization>
  set_batch_retention(const std::string& organization_id,
                      std::optional<std::int64_t> seconds) override;
  expected<std::vector<retention_policy>> list_retention_policies() override;
  expected<unit> update_member_role(const std::string& organization_id,
                                    const std::string& user_id,
                                    acc::role r) override;
  expected<unit> remove_member(const std::string& organization_id,
                               const std::string& user_id) override;
  expected<organization_erase>
  erase_organization(const std::string& organization_id) override;

  expected<unit> insert_refresh_token(const acc::refresh_token& t) override;
  expected<acc::refresh_token>
  find_refresh_token(const std::string& token_hash) override;
  expected<bool> spend_refresh_token(const std::string& token_id) override;
  expected<unit> revoke_token_family(const std::string& family_id) override;

  expected<unit> insert_api_key(const acc::api_key& k) override;
  expected<std::vector<acc::api_key>>
  list_api_keys(const std::string& organization_id) override;
  expected<acc::api_key> get_api_key(const std::string& organization_id,
                                     const std::string& key_id) override;
  expected<acc::api_key>
  find_api_key_by_hash(const std::string& key_hash) override;
  expected<acc::api_key> update_api_key(const std::string& organization_id,
                                        const std::string& key_id,
                                        const api_key_update& u,
                                        acc::unix_time now) override;
  expected<unit> delete_api_key(const std::string& organization_id,
                                const std::string& key_id) override;

  expected<acc::credit_balance>
  get_balance(const std::string& organization_id) override;
  expected<acc::credit_balance> add_credits(const std::string& organization_id,
                                            std::int64_t amount,
                                            const std::string& kind,
                                            const std::string& reference,
                                            acc::unix_time now) override;
  expected<acc::credit_balance>
  take_credits(const std::string& organization_id, std::int64_t amount,
               const std::string& kind, const std::string& reference,
               bool counts_as_consumed, acc::unix_time now) override;
  expected<acc::credit_balance>
  refund_credits(const std::string& organization_id, std::int64_t amount,
                 const std::string& kind, const std::string& reference,
                 acc::unix_time now) override;
  expected<unit> record_audit(const acc::audit_entry& e) override;
  expected<std::vector<acc::audit_entry>>
  list_audit(const std::string& organization_id, std::int64_t limit,
             std::int64_t before_id,
             const std::optional<std::string>& action) override;
  expected<std::vector<acc::credit_entry>>
  list_credit_entries(const std::string& organization_id, std::int64_t limit,
                      std::int64_t before_id) override;

  expected<unit> add_usage(const std::vector<usage_increment>& batch) override;
  expected<std::vector<usage_day>>
  usage_between(const std::string& key_id, const std::string& from_day,
                const std::string& to_day) override;
  expected<std::int64_t> distinct_addresses(const std::string& key_id,
                                            const std::string& from_day,
                                            const std::string& to_day) override;
  expected<std::vector<usage_day>>
  organization_usage_between(const std::string& organization_id,
                             const std::string& from_day,
                             const std::string& to_day) override;
  expected<std::vector<key_usage>>
  organization_usage_by_key(const std::string& organization_id,
                            const std::string& from_day,
                            const std::string& to_day) override;
  expected<std::int64_t>
  organization_distinct_addresses(const std::string& organization_id,
                                  const std::string& from_day,
                                  const std::string& to_day) override;

  expected<unit>
  create_batch_job(const core::batch::job& j,
                   const std::vector<core::batch::item>& items) override;
  expected<core::batch::job> get_batch_job(const std::string& organization_id,
                                           const std::string& job_id) override;
  expected<std::vector<core::batch::job>>
  list_batch_jobs(const std::string& organization_id, std::int64_t limit,
                  std::optional<bool> sandbox) override;
  expected<core::batch::job>
  cancel_batch_job(const std::string& organization_id,
                   const std::string& job_id, std::int64_t now) override;
  expected<core::batch::job>
  delete_batch_job(const std::string& organization_id,
                   const std::string& job_id, std::int64_t now) override;
  expected<std::int64_t>
  erase_expired_batch_results(const std::string& organization_id,
                              std::int64_t cutoff, std::int64_t now,
                              std::int64_t limit) override;
  expected<std::optional<core::batch::job>>
  claim_batch_job(const std::string& owner, std::int64_t lease_seconds,
                  std::int64_t now, std::int64_t max_restarts = 0) override;
  expected<bool> renew_batch_lease(const std::string& job_id,
                                   const std::string& owner,
                                   std::int64_t lease_seconds,
                                   std::int64_t now) override;
  expected<std::vector<core::batch::item>>
  pending_batch_items(const std::string& job_id, std::int64_t after_seq,
                      std::int64_t limit) override;
  expected<core::batch::job>
  save_batch_results(const std::string& job_id, const std::string& owner,
                     const std::vector<core::batch::item>& done,
                     std::int64_t lease_seconds, std::int64_t now) override;
  expected<core::batch::job>
  finish_batch_job(const std::string& job_id, const std::string& owner,
                   core::batch::job_status final_status,
                   std::int64_t now) override;
  expected<std::vector<core::batch::item>>
  batch_items(const std::string& job_id, std::int64_t after_seq,
              std::int64_t limit, bool done_only,
              const std::vector<core::validation::status>& statuses) override;

  expected<unit> insert_webhook(const core::webhooks::endpoint& w) override;
  expected<std::vector<core::webhooks::endpoint>>
  list_webhooks(const std::string& organization_id) override;
  expected<core::webhooks::endpoint>
  get_webhook(const std::string& organization_id,
              const std::string& webhook_id) override;
  expected<core::webhooks::endpoint>
  update_webhook(const std::string& organization_id,
                 const std::string& webhook_id, const webhook_update& u,
                 std::int64_t now) override;
  expected<unit> delete_webhook(const std::string& organization_id,
                                const std::string& webhook_id) override;
  expected<core::webhooks::delivery>
  enqueue_webhook_ping(const std::string& organization_id,
                       const std::string& webhook_id, std::int64_t now_ms,
                       const core::webhooks::ping_limits& limits) override;
  expected<std::vector<core::webhooks::delivery>>
  list_webhook_deliveries(const std::string& organization_id,
                          const std::string& webhook_id,
                          std::int64_t limit) override;
  expected<std::vector<claimed_delivery>>
  claim_webhook_deliveries(const std::string& owner, std::int64_t limit,
                           std::int64_t lease_ms, std::int64_t now_ms) override;
  expected<std::vector<claimed_delivery>> claim_organization_webhook_deliveries(
      const std::string& owner, const std::string& organization_id,
      std::int64_t limit, std::int64_t lease_ms, std::int64_t now_ms) override;
  expected<std::vector<std::string>>
  due_webhook_organizations(std::int64_t now_ms, std::int64_t limit) override;
  expected<bool>
  record_webhook_attempt(const std::string& delivery_id,
                         const std::string& owner,
                         const std::optional<core::webhooks::attempt>& a,
                         const delivery_outcome& outcome) override;
  expected<unit> release_webhook_leases(const std::string& owner) override;
  expected<std::int64_t>
  prune_webhook_deliveries(std::int64_t before_ms) override;

private:
  /// A write transaction; rolls back unless `commit()` ran. SQLite takes
  /// the write lock up front (BEGIN IMMEDIATE) so a read-then-write never
  /// fails with SQLITE_BUSY half-way.
  class transaction {
  public:
    explicit transaction(soci_store& owner);
    ~transaction();
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;
    void commit();

  private:
    soci_store& owner_;
    bool open_ = true;
  };

  /// Thrown inside an operation to return an error after rolling back.
  struct refusal {
    core::error err;
  };

  /// Reconnects a PostgreSQL session that reports it is not connected.
  void ensure_connected();

  /// After a committed erase (docs/privacy.md): on SQLite, copies the WAL
  /// into the database file and truncates it, so the erased rows (zeroed by
  /// secure_delete) leave no copy in the WAL; best effort, a busy reader
  /// only delays it to the next one. Nothing on PostgreSQL (autovacuum).
  void after_erase();

  /// erase_expired_batch_results's jobs, inside `run`: reads the due jobs,
  /// then claims and erases each in one transaction; returns how many this
  /// call erased.
  std::int64_t erase_due_batch_jobs(const std::string& organization_id,
                                    std::int64_t cutoff, std::int64_t now,
                                    std::int64_t limit);

  /// Runs `f` (returning T), turning exceptions into errors. `retry_safe`
  /// operations (reads) run once more on a fresh connection when the first
  /// try lost it.
  template <class T, class F>
  expected<T> run(bool retry_safe, F&& f) {
    for (int attempt = 0;; ++attempt) {
      try {
        ensure_connected();
        return expected<T>{f()};
      } catch (refusal& r) {
        return std::move(r.err);
      } catch (const std::exception& e) {
        auto err = to_error(e, url_.kind);
        if (err.code == core::errc::unavailable && retry_safe && attempt == 0)
          continue;
        return err;
      }
    }
  }

  /// Both claims: every organization's deliveries when `organization_id`
  /// is null.
  expected<std::vector<claimed_delivery>>
  claim_deliveries(const std::string& owner, const std::string* organization_id,
                   std::int64_t limit, std::int64_t lease_ms,
                   std::int64_t now_ms);

  [[noreturn]] static void refuse(core::errc code, std::string message) {
    throw refusal{core::make_error(code, std::move(message))};
  }

  /// The database server's clock, Unix seconds (PostgreSQL: the start of
  /// the current transaction).
  std::int64_t db_clock();

  /// `now`, or the database's clock when `now` is `database_clock`.
  std::int64_t time_of(std::int64_t now);

  /// Inside an open transaction: tells every process listening (PostgreSQL
  /// NOTIFY, delivered at commit); nothing on SQLite.
  void notify(change_kind kind, const std::string& id);

  /// Reads every signing key, the current one first.
  std::vector<acc::signing_key> select_signing_keys();

  acc::credit_balance read_balance(const std::string& organization_id);

  /// Inside an open transaction: adds `amount` (>= 0) to the balance and
  /// `consumed` to the consumed total, with a ledger entry of `kind` when
  /// `amount` is not zero. No account -> not_found.
  acc::credit_balance credit_account(const std::string& organization_id,
                                     std::int64_t amount, std::int64_t consumed,
                                     const std::string& kind,
                                     const std::string& reference,
                                     acc::unix_time now);

  /// Inside an open transaction: removes `amount` (> 0) only if the balance
  /// covers it (one conditional update), adds `consumed` to the consumed
  /// total and writes a ledger entry of `kind`. Short ->
  /// insufficient_credits; no account -> not_found.
  acc::credit_balance debit_account(const std::string& organization_id,
                                    std::int64_t amount, std::int64_t consumed,
                                    const std::string& kind,
                                    const std::string& reference,
                                    acc::unix_time now);

  /// Reads one job, locking its row (PostgreSQL) when `lock`; the
  /// organization is checked unless `organization_id` is null. Missing ->
  /// not_found.
  core::batch::job load_batch_job(const std::string* organization_id,
                                  const std::string& job_id, bool lock);

  /// Inside an open transaction: ends active job `j` with `final_status`
  /// (finished_at = now, lease cleared) and settles its credits: the unspent
  /// reservation goes back (ledger kind `batch_refund`) and what the job
  /// used counts as consumed. Returns the updated job.
  core::batch::job close_batch_job(const core::batch::job& j,
                                   core::batch::job_status final_status,
                                   std::int64_t now);
  /// Inside an open transaction: queues event `e` about `subject_id` for
  /// every active endpoint of the organization subscribed to it (the
  /// outbox; docs/webhooks.md). `now` in Unix seconds.
  void emit_webhook_event(const std::string& organization_id,
                          core::webhooks::event_type e,
                          const std::string& subject_id, std::int64_t now);

  /// Inside an open transaction: queues credits.low for every active
  /// subscribed endpoint whose threshold a debit from `before` to `after`
  /// crossed (core::webhooks::crossed_below).
  void emit_credits_low(const std::string& organization_id, std::int64_t before,
                        std::int64_t after, std::int64_t now);

  /// Inserts one pending delivery due at `created_ms`; returns its id (made
  /// by the database's random generator).
  std::string insert_delivery(const core::webhooks::delivery& d);

  /// Reads one endpoint; the organization is checked unless null.
  /// Missing -> not_found.
  core::webhooks::endpoint load_webhook(const std::string* organization_id,
                                        const std::string& webhook_id);

  std::vector<acc::api_key> select_keys(const std::string& where,
                                        const std::string& a,
                                        const std::string& b);
  acc::api_key load_key(const std::string& organization_id,
                        const std::string& key_id);

  database_url url_;
  std::string channel_; ///< NOTIFY channel (PostgreSQL).
  soci::session sql_;
};

} // namespace mailassay::storage
