#pragma once

// The batch use cases of an organization: a CSV upload turned into a queued
// job, the job list, one job, a cancel. Run by storage workers like the
// other account use cases; the batch runner (actors/batch) does the work.

#include "core/batch/job.hpp"
#include "core/syntax/address.hpp"
#include "use_cases/accounts/types.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::use_cases::accounts {

/// The 403 of a credential that may not ask for an SMTP check (an API key
/// whose `config.smtp` is off); nullopt when `smtp` is not asked or is
/// allowed. The validation endpoints and uploads share it.
std::optional<core::error> smtp_refusal(const principal& who, bool smtp);

/// An upload to turn into a job: the CSV and its options.
struct batch_upload {
  std::string_view csv; ///< Lives as long as the request.
  std::string file_name;
  bool deduplicate = true;
  bool smtp = false;
  std::string email_column; ///< "" picks the column (core/batch/intake).
};

/// Reads the CSV (at most `batch.max_addresses` addresses, parsed with
/// `syntax`), reserves one credit per address when SMTP is asked (none for
/// a test key, whose job runs in the sandbox), and stores a queued job of
/// the caller's organization. 403 when the key may not ask for SMTP, 402 when
/// the credits are short, 409 when the organization has an active job, 400/422
/// for a CSV that cannot be read. Gives the intake's memory back to the system
/// before it returns.
expected<core::batch::job>
create_batch_job(account_env& env, const principal& who, const batch_upload& in,
                 const core::syntax::options& syntax);

/// The organization's latest jobs, newest first (at most 100).
expected<std::vector<core::batch::job>> list_batch_jobs(account_env& env,
                                                        const principal& who);

/// One job of the caller's organization (404 for another's).
expected<core::batch::job> get_batch_job(account_env& env, const principal& who,
                                         const std::string& id);

/// One job of the caller's organization whose results may still be read:
/// as get_batch_job, and 410 (errc::results_erased) once the retention
/// erased them (docs/privacy.md).
expected<core::batch::job> batch_job_with_results(account_env& env,
                                                  const principal& who,
                                                  const std::string& id);

/// Cancels an active job of the caller's organization; 409 once it ended.
expected<core::batch::job>
cancel_batch_job(account_env& env, const principal& who, const std::string& id);

/// Erases a job of the caller's organization (cancelled first when active,
/// its credits refunded as a cancel does): its rows, results and record.
/// Users must be owners or admins (403 for a member); any key of the
/// organization may. 404 for another organization's job.
expected<unit> delete_batch_job(account_env& env, const principal& who,
                                const std::string& id);

} // namespace mailassay::use_cases::accounts
