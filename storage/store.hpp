#pragma once

#include "core/account/audit.hpp"
#include "core/account/records.hpp"
#include "core/base/expected.hpp"
#include "core/batch/job.hpp"
#include "core/webhooks/ping_limits.hpp"
#include "core/webhooks/records.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mailassay::storage {

namespace acc = core::account;
using core::expected;
using core::unit;

/// One day's usage of one key, added to the stored counters.
struct usage_increment {
  std::string key_id;
  std::string organization_id;
  std::string day; ///< "YYYY-MM-DD", UTC.
  std::int64_t requests = 0;
  std::int64_t successful = 0;
  std::int64_t credits = 0;
  /// SHA-256 hex digests of the addresses validated (for distinct counts).
  std::vector<std::string> address_hashes;
};

/// Stored usage of one key on one day.
struct usage_day {
  std::string day;
  std::int64_t requests = 0;
  std::int64_t successful = 0;
  std::int64_t credits = 0;
};

/// Stored usage of one key over a window (summed over its days).
struct key_usage {
  std::string key_id;
  std::int64_t requests = 0;
  std::int64_t successful = 0;
  std::int64_t credits = 0;
};

/// Pass as `now` to the batch methods to take the time from the database
/// server's clock instead of the caller's: every process sharing the
/// database then compares leases with one clock, whatever the skew between
/// their hosts (docs/deployment.md).
inline constexpr std::int64_t database_clock =
    std::numeric_limits<std::int64_t>::min();

/// An organization and its own batch retention (nullopt: the server's).
struct retention_policy {
  std::string organization_id;
  std::optional<std::int64_t> batch_retention_seconds;
};

/// What erasing an organization removed that running parts must hear of.
struct organization_erase {
  std::vector<std::string> key_hashes;  ///< Its API keys' secret hashes.
  std::vector<std::string> active_jobs; ///< Its jobs that were still active.
};

/// Fields of an API key a PATCH may change; nullopt = leave unchanged.
struct api_key_update {
  std::optional<std::string> name;
  std::optional<std::vector<std::string>> allowed_domains;
  std::optional<acc::key_config> config;
  std::optional<acc::rate_limits> limits;
  std::optional<acc::key_status> status;
};

/// Fields of a webhook endpoint a PATCH or a rotation changes; nullopt =
/// leave unchanged.
struct webhook_update {
  std::optional<std::string> url;
  std::optional<std::string> description;
  std::optional<std::vector<core::webhooks::event_type>> events;
  std::optional<core::webhooks::endpoint_status> status;
  std::optional<std::int64_t> credits_low_threshold;
  /// A rotation: the new sealed secret; the current one becomes the
  /// previous secret until `previous_secret_expires_at`.
  std::optional<std::string> sealed_secret;
  std::int64_t previous_secret_expires_at = 0;
};

/// A delivery a dispatcher claimed, with its endpoint.
struct claimed_delivery {
  core::webhooks::delivery delivery;
  core::webhooks::endpoint endpoint;
};

/// How an attempt (or a give-up without one) leaves a delivery.
struct delivery_outcome {
  core::webhooks::delivery_status status =
      core::webhooks::delivery_status::pending;
  /// Due time of the next attempt while pending (Unix ms).
  std::int64_t next_attempt_ms = 0;
  /// When it was delivered (Unix ms), for `delivered`.
  std::int64_t delivered_ms = 0;
};

/// The single storage interface; every backend passes the same test suite.
///
/// Every method returns `errc::unavailable` when the database cannot be
/// reached, `errc::conflict` on a unique-constraint violation,
/// `errc::not_found` when the addressed row does not exist (for this
/// organization), and `errc::internal` for anything else. Methods that write
/// several rows do it in one transaction: either all rows are written or none.
/// A store object is used by one thread at a time.
///
/// On PostgreSQL, the methods that change what other processes cache or run
/// (API keys, members, batch cancels, signing keys) notify them in the same
/// transaction (storage/notify.hpp).
class store {
public:
  virtual ~store() = default;

  /// Returns "sqlite" or "postgresql".
  virtual std::string backend_name() const = 0;

  /// Runs a trivial query; used by /health.
  virtual expected<unit> ping() = 0;

  /// Returns the database server's clock, Unix seconds.
  virtual expected<std::int64_t> database_now() = 0;

  /// Returns how many processes LISTEN for changes of this database now
  /// (connections named `listener_application_name`, storage/notify.hpp);
  /// 0 on SQLite. The process that made a change waits for that many
  /// acknowledgements (actors/cluster_events.hpp).
  virtual expected<std::int64_t> listening_processes() = 0;

  // -- access-token signing keys (docs/deployment.md) -----------------------

  /// Makes `candidate` the signing key unless the database holds one (two
  /// processes starting at once store exactly one: the first); its
  /// `created_at` is the database's clock. Returns every key, the signing
  /// one first, then retired ones, newest first.
  virtual expected<std::vector<acc::signing_key>>
  ensure_signing_key(const acc::signing_key& candidate) = 0;

  /// Returns every signing key, the current one first.
  virtual expected<std::vector<acc::signing_key>> signing_keys() = 0;

  /// Retires the current key (retired_at = the database's clock), makes
  /// `next` current, forgets keys retired more than `keep_seconds` ago (all
  /// of them when `keep_seconds` < 0) and notifies other processes, in one
  /// transaction. Returns every key, the new one first. A rotation racing
  /// another -> errc::conflict.
  virtual expected<std::vector<acc::signing_key>>
  rotate_signing_key(const acc::signing_key& next,
                     std::int64_t keep_seconds) = 0;

  /// Replaces the stored secret of key `kid` by `sealed` if it still is
  /// `plain` (sealing a key stored before keys were sealed; of processes
  /// starting together, one changes the row). Returns whether it did.
  virtual expected<bool> seal_signing_key(const std::string& kid,
                                          const std::string& plain,
                                          const std::string& sealed) = 0;

  // -- organizations and users ----------------------------------------------

  /// Creates an organization, its owner user, the owner membership and the
  /// credit account holding `initial_credits` (with a `signup` ledger entry
  /// when > 0). Duplicate user email -> conflict.
  virtual expected<unit> create_organization(const acc::organization& org,
                                             const acc::user& owner,
                                             std::int64_t initial_credits,
                                             acc::unix_time now) = 0;

  /// Adds a user to an existing organization with `r`. Duplicate email ->
  /// conflict.
  virtual expected<unit> add_member(const std::string& organization_id,
                                    const acc::user& person, acc::role r) = 0;

  /// Finds a user (with organization and role) by lower-cased email.
  virtual expected<acc::member>
  find_member_by_email(const std::string& email) = 0;

  /// Finds a user (with organization and role) by id.
  virtual expected<acc::member> find_member(const std::string& user_id) = 0;

  /// Returns an organization by id.
  virtual expected<acc::organization>
  get_organization(const std::string& organization_id) = 0;

  /// Lists every organization with member count and balance, oldest first.
  virtual expected<std::vector<acc::organization_summary>>
  list_organizations() = 0;

  /// Lists the members of an organization, oldest first.
  virtual expected<std::vector<acc::member>>
  list_members(const std::string& organization_id) = 0;

  /// Sets (or, with nullopt, clears: the server's applies) the
  /// organization's own retention of batch results; the caller checked the
  /// bounds (core/batch/retention.hpp). Returns the updated organization.
  virtual expected<acc::organization>
  set_batch_retention(const std::string& organization_id,
                      std::optional<std::int64_t> seconds) = 0;

  /// Every organization with its own batch retention (nullopt: the
  /// server's): what the retention sweeper walks each tick.
  virtual expected<std::vector<retention_policy>> list_retention_policies() = 0;

  /// Changes a member's role. Refuses (errc::conflict, message
  /// "organization must keep an owner") to demote the last owner. Notifies
  /// other processes (a member change).
  virtual expected<unit> update_member_role(const std::string& organization_id,
                                            const std::string& user_id,
                                            acc::role r) = 0;

  /// Removes a member (and the user). Refuses (errc::conflict) to remove the
  /// last owner. Notifies other processes (a member change).
  virtual expected<unit> remove_member(const std::string& organization_id,
                                       const std::string& user_id) = 0;

  /// Erases an organization and everything it owns (DELETE
  /// /v2/organization, docs/privacy.md) in one transaction: its users (a
  /// user belongs to one organization) with their refresh tokens, its keys
  /// with their usage, webhooks with their deliveries, jobs with their rows,
  /// its ledger and credit account. Tells other processes of each key, each
  /// member and each active job (cancelled) as a revoke, a removal and a
  /// cancel do. On SQLite the WAL is checkpointed after it. Unknown
  /// organization -> errc::not_found.
  virtual expected<organization_erase>
  erase_organization(const std::string& organization_id) = 0;

  // -- audit log (docs/privacy.md) -----------------------------------------

  /// Records `e` (its id is assigned). An `auth.login_failed` entry is
  /// folded into the organization's entry of the same target and address
  /// recorded less than core::account::login_failure_window seconds before
  /// (its occurrences + 1, its time `e.at`) when there is one.
  virtual expected<unit> record_audit(const acc::audit_entry& e) = 0;

  /// Lists an organization's entries newest first: at most `limit`, with
  /// ids below `before_id` (0 = from the newest), only `action` when set.
  virtual expected<std::vector<acc::audit_entry>>
  list_audit(const std::string& organization_id, std::int64_t limit,
             std::int64_t before_id,
             const std::optional<std::string>& action) = 0;

  // -- refresh tokens -------------------------------------------------------

  /// Stores a new refresh token.
  virtual expected<unit> insert_refresh_token(const acc::refresh_token& t) = 0;

  /// Finds a refresh token by hash.
  virtual expected<acc::refresh_token>
  find_refresh_token(const std::string& token_hash) = 0;

  /// Marks an unspent, unrevoked token spent. Returns false when another
  /// caller spent it first (so rotation is race-free).
  virtual expected<bool> spend_refresh_token(const std::string& token_id) = 0;

  /// Revokes every token of a family.
  virtual expected<unit> revoke_token_family(const std::string& family_id) = 0;

  // -- API keys -------------------------------------------------------------

  /// Stores a new key. Duplicate hash -> conflict.
  virtual expected<unit> insert_api_key(const acc::api_key& k) = 0;

  /// Lists an organization's keys, oldest first.
  virtual expected<std::vector<acc::api_key>>
  list_api_keys(const std::string& organization_id) = 0;

  /// Returns one key of an organization (not_found for other orgs' keys).
  virtual expected<acc::api_key> get_api_key(const std::string& organization_id,
                                             const std::string& key_id) = 0;

  /// Finds a key by the SHA-256 hex of its secret, whatever its status.
  virtual expected<acc::api_key>
  find_api_key_by_hash(const std::string& key_hash) = 0;

  /// Applies the set fields of `u`; returns the updated key. Other
  /// processes drop the key from their caches (NOTIFY).
  virtual expected<acc::api_key>
  update_api_key(const std::string& organization_id, const std::string& key_id,
                 const api_key_update& u, acc::unix_time now) = 0;

  /// Deletes a key; other processes drop it from their caches (NOTIFY).
  virtual expected<unit> delete_api_key(const std::string& organization_id,
                                        const std::string& key_id) = 0;

  // -- credits --------------------------------------------------------------

  /// Returns an organization's balance.
  virtual expected<acc::credit_balance>
  get_balance(const std::string& organization_id) = 0;

  /// Adds `amount` (> 0) credits with a ledger entry of `kind`.
  virtual expected<acc::credit_balance>
  add_credits(const std::string& organization_id, std::int64_t amount,
              const std::string& kind, const std::string& reference,
              acc::unix_time now) = 0;

  /// Removes `amount` (> 0) credits only if the balance covers it, with a
  /// ledger entry of `kind`, in one conditional update (never below zero,
  /// also across processes). Short -> errc::insufficient_credits.
  /// `counts_as_consumed` also raises `consumed` by `amount`.
  virtual expected<acc::credit_balance>
  take_credits(const std::string& organization_id, std::int64_t amount,
               const std::string& kind, const std::string& reference,
               bool counts_as_consumed, acc::unix_time now) = 0;

  /// Gives back `amount` (> 0) credits that were taken with
  /// `counts_as_consumed` but not used (a probe that reached no server):
  /// balance up, consumed down, with a ledger entry of `kind`.
  virtual expected<acc::credit_balance>
  refund_credits(const std::string& organization_id, std::int64_t amount,
                 const std::string& kind, const std::string& reference,
                 acc::unix_time now) = 0;

  /// Lists ledger entries newest first, `limit` rows before id `before_id`
  /// (0 = from the newest).
  virtual expected<std::vector<acc::credit_entry>>
  list_credit_entries(const std::string& organization_id, std::int64_t limit,
                      std::int64_t before_id) = 0;

  // -- usage ----------------------------------------------------------------

  /// Adds the increments to the per-key, per-day counters, in one
  /// transaction.
  virtual expected<unit>
  add_usage(const std::vector<usage_increment>& batch) = 0;

  /// Returns the stored days of a key in [from_day, to_day], ascending.
  virtual expected<std::vector<usage_day>>
  usage_between(const std::string& key_id, const std::string& from_day,
                const std::string& to_day) = 0;

  /// Counts distinct address hashes of a key in [from_day, to_day].
  virtual expected<std::int64_t>
  distinct_addresses(const std::string& key_id, const std::string& from_day,
                     const std::string& to_day) = 0;

  /// Returns the days in [from_day, to_day] on which any key of the
  /// organization was used, each summed over its keys, ascending. Usage of
  /// deleted keys is gone with them.
  virtual expected<std::vector<usage_day>>
  organization_usage_between(const std::string& organization_id,
                             const std::string& from_day,
                             const std::string& to_day) = 0;

  /// Returns each key of the organization used in [from_day, to_day] with
  /// its counters summed over the window, most requests first (then id).
  virtual expected<std::vector<key_usage>>
  organization_usage_by_key(const std::string& organization_id,
                            const std::string& from_day,
                            const std::string& to_day) = 0;

  /// Counts distinct address hashes over all keys of the organization in
  /// [from_day, to_day] (an address validated with two keys counts once).
  virtual expected<std::int64_t>
  organization_distinct_addresses(const std::string& organization_id,
                                  const std::string& from_day,
                                  const std::string& to_day) = 0;

  // -- batch jobs (docs/batch.md) -------------------------------------------

  /// Stores a new queued job and its items in one transaction. When
  /// `j.credits_reserved` > 0 the credits are taken from the organization in
  /// the same transaction (ledger kind `batch_reserve`, reference = job id);
  /// short -> errc::insufficient_credits. Another active job of the
  /// organization -> errc::active_job_exists (enforced by a partial unique
  /// index, so also across processes). On any error nothing is written.
  virtual expected<unit>
  create_batch_job(const core::batch::job& j,
                   const std::vector<core::batch::item>& items) = 0;

  /// Returns one job of an organization (not_found for other orgs' jobs).
  virtual expected<core::batch::job>
  get_batch_job(const std::string& organization_id,
                const std::string& job_id) = 0;

  /// Lists an organization's jobs, newest first, at most `limit`; only those
  /// whose sandbox flag is `*sandbox` when it is set (a key sees its mode's).
  virtual expected<std::vector<core::batch::job>>
  list_batch_jobs(const std::string& organization_id, std::int64_t limit,
                  std::optional<bool> sandbox) = 0;

  /// Cancels an active job: status cancelled, finished_at = now, lease
  /// cleared, and the unspent reservation (credits_reserved - credits_used)
  /// refunded (ledger kind `batch_refund`) in one transaction, which also
  /// tells the process running it (NOTIFY). A job that is no longer active
  /// -> errc::conflict. Returns the updated job.
  virtual expected<core::batch::job>
  cancel_batch_job(const std::string& organization_id,
                   const std::string& job_id, std::int64_t now) = 0;

  /// Erases one job of an organization (DELETE /v2/batch/{jobId}): an
  /// active job is first cancelled exactly as cancel_batch_job does (unused
  /// reservation refunded, batch.cancelled, the running process told), then
  /// its items and its record are deleted, all in one transaction. Returns
  /// the job as it was just before the erase. Another organization's job or
  /// none -> errc::not_found.
  virtual expected<core::batch::job>
  delete_batch_job(const std::string& organization_id,
                   const std::string& job_id, std::int64_t now) = 0;

  /// The retention sweep of one organization (docs/privacy.md): erases
  /// the rows, results and export (every copy of the addresses) of its
  /// finished jobs (completed, failed, cancelled) that finished at or
  /// before `cutoff` and were not erased yet, oldest first, at most
  /// `limit` jobs per call. A job's record stays, with its counts, and
  /// gains results_erased_at = `now`. Setting it is the claim: of the
  /// processes sweeping at once, exactly one erases each job (an UPDATE
  /// ... WHERE results_erased_at IS NULL in the erasing transaction).
  /// On SQLite the WAL is checkpointed after an erase, as
  /// delete_batch_job does. Returns how many jobs this call erased.
  ///
  /// The audit entries of the organization recorded at or before `cutoff`
  /// are erased in the same call (they follow the organization's
  /// retention, docs/privacy.md); they are not counted in the result.
  virtual expected<std::int64_t>
  erase_expired_batch_results(const std::string& organization_id,
                              std::int64_t cutoff, std::int64_t now,
                              std::int64_t limit) = 0;

  /// Claims one job for `owner` until now + lease_seconds (`now` may be
  /// `database_clock`, as for every batch method below): the oldest queued
  /// job, or a processing job whose lease ran out (its owner died). Sets
  /// status processing and started_at (first claim only). Two processes never
  /// claim the same job (PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED).
  /// nullopt when there is nothing to claim.
  ///
  /// Taking a job over from an owner that died holding it counts one more
  /// restart (a checkpoint that finishes rows resets the count). When that
  /// count reaches `max_restarts` (0: never) the job is not claimed but
  /// failed in the same transaction, as finish_batch_job fails it (error
  /// JOB_KEPT_STOPPING, the unspent reservation refunded, batch.failed
  /// queued), and returned with status failed: the caller claims again.
  virtual expected<std::optional<core::batch::job>>
  claim_batch_job(const std::string& owner, std::int64_t lease_seconds,
                  std::int64_t now, std::int64_t max_restarts = 0) = 0;

  /// Extends the lease of a processing job `owner` holds. Returns false when
  /// the job is no longer processing or another owner holds it. A
  /// `lease_seconds` of 0 hands the job back: it expires now and has no
  /// owner, so the next claim resumes it without counting a restart.
  virtual expected<bool> renew_batch_lease(const std::string& job_id,
                                           const std::string& owner,
                                           std::int64_t lease_seconds,
                                           std::int64_t now) = 0;

  /// Returns up to `limit` items of a job that are not done, seq > after_seq,
  /// ascending by seq.
  virtual expected<std::vector<core::batch::item>>
  pending_batch_items(const std::string& job_id, std::int64_t after_seq,
                      std::int64_t limit) = 0;

  /// Checkpoint: in one transaction, stores the results of `done` items
  /// (matched by seq; items already done are skipped, so a replay after a
  /// crash changes nothing), adds the newly done ones to processed, counts
  /// (by status) and credits_used, and renews the lease. Only while the job
  /// is processing and held by `owner`; otherwise errc::conflict and nothing
  /// is written. Returns the updated job.
  virtual expected<core::batch::job>
  save_batch_results(const std::string& job_id, const std::string& owner,
                     const std::vector<core::batch::item>& done,
                     std::int64_t lease_seconds, std::int64_t now) = 0;

  /// Ends a processing job held by `owner` with `final_status` (completed or
  /// failed): finished_at = now, lease cleared, the unspent reservation
  /// refunded, in one transaction. Not held / not processing ->
  /// errc::conflict. Returns the updated job.
  virtual expected<core::batch::job>
  finish_batch_job(const std::string& job_id, const std::string& owner,
                   core::batch::job_status final_status, std::int64_t now) = 0;

  /// Returns up to `limit` items of a job with seq > after_seq, ascending;
  /// done only when `done_only`; when `statuses` is not empty only done items
  /// whose status is listed. Used to stream exports page by page.
  virtual expected<std::vector<core::batch::item>>
  batch_items(const std::string& job_id, std::int64_t after_seq,
              std::int64_t limit, bool done_only,
              const std::vector<core::validation::status>& statuses) = 0;

  // -- webhooks (docs/webhooks.md) ------------------------------------------
  //
  // Events are written as deliveries (the outbox) by the methods that make
  // them happen, in their own transaction: finish_batch_job and
  // cancel_batch_job (batch.completed, batch.failed, batch.cancelled),
  // update_api_key when it revokes an active key (key.revoked), and every
  // debit (take_credits, create_batch_job's reservation) that takes the
  // balance below an endpoint's threshold (credits.low). Each active
  // endpoint of the organization subscribed to the event gets one
  // delivery.

  /// Stores a new endpoint.
  virtual expected<unit> insert_webhook(const core::webhooks::endpoint& w) = 0;

  /// Lists an organization's endpoints, oldest first.
  virtual expected<std::vector<core::webhooks::endpoint>>
  list_webhooks(const std::string& organization_id) = 0;

  /// Returns one endpoint of an organization (not_found for others').
  virtual expected<core::webhooks::endpoint>
  get_webhook(const std::string& organization_id,
              const std::string& webhook_id) = 0;

  /// Applies the set fields of `u`; returns the updated endpoint.
  virtual expected<core::webhooks::endpoint>
  update_webhook(const std::string& organization_id,
                 const std::string& webhook_id, const webhook_update& u,
                 std::int64_t now) = 0;

  /// Deletes an endpoint with its deliveries and their attempts.
  virtual expected<unit> delete_webhook(const std::string& organization_id,
                                        const std::string& webhook_id) = 0;

  /// Queues a `ping` delivery to one endpoint of the organization (due at
  /// once, whatever it subscribes to and even when disabled; it is sent
  /// once the endpoint is active). Returns the delivery. In the same
  /// transaction (the organization's row locked on PostgreSQL, so
  /// concurrent calls count each other) the pings and pending deliveries
  /// are counted and `limits` applied (core/webhooks/ping_limits.hpp): a
  /// refusal -> errc::rate_limited with retry_after set.
  virtual expected<core::webhooks::delivery>
  enqueue_webhook_ping(const std::string& organization_id,
                       const std::string& webhook_id, std::int64_t now_ms,
                       const core::webhooks::ping_limits& limits) = 0;

  /// Lists an endpoint's deliveries, newest first, at most `limit`, each
  /// with its attempts (oldest first).
  virtual expected<std::vector<core::webhooks::delivery>>
  list_webhook_deliveries(const std::string& organization_id,
                          const std::string& webhook_id,
                          std::int64_t limit) = 0;

  /// Claims up to `limit` pending deliveries that are due (next attempt at
  /// or before `now_ms`), of active endpoints, not leased by anyone (or
  /// whose lease ran out: its holder died mid-attempt), for `owner` until
  /// now_ms + lease_ms; oldest due first. Two processes never claim the
  /// same delivery (PostgreSQL: FOR UPDATE SKIP LOCKED).
  virtual expected<std::vector<claimed_delivery>>
  claim_webhook_deliveries(const std::string& owner, std::int64_t limit,
                           std::int64_t lease_ms, std::int64_t now_ms) = 0;

  /// The same, only deliveries of `organization_id` (the dispatcher's
  /// fair share: core/webhooks/fair_share.hpp).
  virtual expected<std::vector<claimed_delivery>>
  claim_organization_webhook_deliveries(const std::string& owner,
                                        const std::string& organization_id,
                                        std::int64_t limit,
                                        std::int64_t lease_ms,
                                        std::int64_t now_ms) = 0;

  /// The organizations that have deliveries a claim at `now_ms` could take,
  /// the one whose oldest due delivery waited longest first; at most
  /// `limit`. A plain read (no lock).
  virtual expected<std::vector<std::string>>
  due_webhook_organizations(std::int64_t now_ms, std::int64_t limit) = 0;

  /// Records how a claimed delivery went, in one transaction: the attempt
  /// (when one was made; numbered after the ones before), the new status,
  /// next due time, last answer, and the lease released. Only while the
  /// delivery is pending and `owner` holds it; otherwise returns false and
  /// writes nothing. A second 2xx attempt of one delivery is refused by
  /// the database (partial unique index).
  virtual expected<bool>
  record_webhook_attempt(const std::string& delivery_id,
                         const std::string& owner,
                         const std::optional<core::webhooks::attempt>& a,
                         const delivery_outcome& outcome) = 0;

  /// Releases every lease `owner` holds (shutdown): the deliveries are due
  /// again for whoever claims next.
  virtual expected<unit> release_webhook_leases(const std::string& owner) = 0;

  /// Deletes delivered and failed deliveries created before `before_ms`;
  /// returns how many.
  virtual expected<std::int64_t>
  prune_webhook_deliveries(std::int64_t before_ms) = 0;
};

/// Opens a store from a database URL: `sqlite:///abs/path.db`,
/// `sqlite://relative/path.db` or `postgresql://user:pass@host:port/db`,
/// creating the SQLite file's directory if needed and applying pending
/// migrations. Bad URL -> errc::bad_request; unreachable -> errc::unavailable.
expected<std::unique_ptr<store>> open_store(const std::string& url);

} // namespace mailassay::storage
