#include "use_cases/accounts/batches.hpp"

#include "core/account/permissions.hpp"
#include "core/batch/intake.hpp"
#include "security/random.hpp"
#include "use_cases/accounts/audit.hpp"

#include <malloc.h>

namespace mailassay::use_cases::accounts {

using core::batch::job;
using core::batch::job_status;

std::optional<core::error> smtp_refusal(const principal& who, bool smtp) {
  if (!smtp || !who.key || who.key->config.smtp)
    return std::nullopt;
  return core::make_error(
      core::errc::forbidden,
      "SMTP verification is not enabled for this API key (config.smtp)");
}

namespace {

// The job of a read CSV, queued; its invalid rows are done already.
job queued_job(const principal& who, const batch_upload& in,
               const core::batch::intake_result& read, std::int64_t now) {
  job j;
  j.id = "job_" + security::random_base62(20);
  j.organization_id = who.organization_id();
  j.status = job_status::queued;
  j.file_name = in.file_name;
  j.smtp = in.smtp;
  j.deduplicate = in.deduplicate;
  // A test key's job runs in the sandbox: nothing to reserve.
  j.sandbox = who.sandbox();
  core::batch::fill_job(j, read);
  j.processed = read.invalid_rows;
  j.counts.invalid = read.invalid_rows;
  j.credits_reserved = in.smtp && !j.sandbox ? read.unique_emails : 0;
  j.created_at = now;
  return j;
}

} // namespace

expected<job> create_batch_job(account_env& env, const principal& who,
                               const batch_upload& in,
                               const core::syntax::options& syntax) {
  if (auto refused = smtp_refusal(who, in.smtp))
    return *refused;
  core::batch::intake_options opts;
  opts.deduplicate = in.deduplicate;
  opts.email_column = in.email_column;
  opts.max_addresses = static_cast<std::size_t>(env.cfg.batch.max_addresses);
  opts.syntax = syntax;
  auto read = core::batch::read_csv(in.csv, opts);
  if (!read)
    return read.error_value();
  auto j = queued_job(who, in, *read, env.now);
  auto stored = env.db.create_batch_job(j, read->items);
  // An upload briefly holds ~100 MB on this worker; give it back to the
  // system rather than keep each worker's high-water mark (glibc arenas).
  read = core::batch::intake_result{};
  malloc_trim(0);
  if (!stored) {
    auto e = stored.error_value();
    // The spec's message (the ledger says it in its own words).
    if (e.code == core::errc::insufficient_credits)
      e.message = "Insufficient credits for SMTP validation";
    return e;
  }
  return j;
}

expected<std::vector<job>> list_batch_jobs(account_env& env,
                                           const principal& who) {
  std::optional<bool> sandbox;
  switch (acc::job_scope_of(who.key.get())) {
    case acc::job_scope::all: break;
    case acc::job_scope::live_only: sandbox = false; break;
    case acc::job_scope::sandbox_only: sandbox = true; break;
  }
  return env.db.list_batch_jobs(who.organization_id(), 100, sandbox);
}

expected<job> get_batch_job(account_env& env, const principal& who,
                            const std::string& id) {
  auto j = env.db.get_batch_job(who.organization_id(), id);
  // A job of the other mode is as unknown to a key as another tenant's.
  if (j && !acc::in_job_scope(acc::job_scope_of(who.key.get()), j->sandbox))
    return core::make_error(core::errc::not_found, "batch job not found");
  return j;
}

expected<job> batch_job_with_results(account_env& env, const principal& who,
                                     const std::string& id) {
  auto j = get_batch_job(env, who, id);
  if (j && j->results_erased_at)
    return core::make_error(
        core::errc::results_erased,
        "The results of this batch job were erased after the retention "
        "period; the job record keeps its counts");
  return j;
}

expected<job> cancel_batch_job(account_env& env, const principal& who,
                               const std::string& id) {
  // The sandbox flag never changes, so the check need not share the
  // cancel's transaction.
  if (auto seen = get_batch_job(env, who, id); !seen)
    return seen;
  auto j = env.db.cancel_batch_job(who.organization_id(), id,
                                   storage::database_clock);
  if (!j && j.error_value().code == core::errc::conflict) {
    auto e = j.error_value();
    e.message = "The batch job is no longer active";
    return e;
  }
  return j;
}

expected<unit> delete_batch_job(account_env& env, const principal& who,
                                const std::string& id) {
  if (!who.key && !core::account::may_erase_data(who.role))
    return core::make_error(core::errc::forbidden,
                            "Only owners and admins can delete batch jobs");
  // A test key may not erase a live job, nor a live key a sandbox one.
  if (auto seen = get_batch_job(env, who, id); !seen)
    return seen.error_value();
  auto erased = env.db.delete_batch_job(who.organization_id(), id,
                                        storage::database_clock);
  if (!erased)
    return erased.error_value();
  record_audit(env, who, "batch.deleted", id,
               {{"rows", erased->total_rows},
                {"status", core::batch::to_string(erased->status)}});
  return unit{};
}

} // namespace mailassay::use_cases::accounts
