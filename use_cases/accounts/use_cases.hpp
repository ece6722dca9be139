#pragma once

#include "security/jwt.hpp"
#include "use_cases/accounts/types.hpp"

namespace mailassay::use_cases::accounts {

// Synchronous use cases run by storage workers. Each checks permissions with
// core/account rules, talks to storage, and returns a value or an error.

/// Creates an organization with its owner and opens a session.
expected<session> signup(account_env& env, const signup_input& in);

/// Checks a password and opens a session. Unknown email and wrong password
/// give the same 401 after the same work.
expected<session> login(account_env& env, const std::string& email,
                        const std::string& password);

/// Spends a refresh token for a new pair; a spent token revokes its family.
expected<session> refresh(account_env& env, const std::string& token);

/// Revokes the family of a refresh token.
expected<unit> logout(account_env& env, const std::string& token);

/// Resolves credentials to a principal (no header -> "No authorization
/// header"; bad, expired, revoked -> "Unauthorized").
expected<principal> authenticate(account_env& env, const credentials& c);

/// Resolves credentials without storage: decides missing headers, and API
/// keys found in the cache; nullopt when storage is needed (JWT, cache miss).
std::optional<expected<principal>> authenticate_cached(const key_cache& keys,
                                                       const credentials& c,
                                                       std::int64_t now);

/// Like authenticate, but refuses API keys: for JWT-only endpoints.
expected<principal> authenticate_user(account_env& env, const credentials& c);

/// Describes the caller.
expected<me_view> me(account_env& env, const principal& who);

/// The caller's organization with member count and balance.
expected<organization_view> organization(account_env& env,
                                         const principal& who);

/// Sets the organization's own retention of batch results (PATCH
/// /v2/organization; nullopt: back to the server's). Owners only (403);
/// 0 < seconds <= the server's `batch.retention_seconds`, else 422
/// (core/batch/retention.hpp). Returns the organization as GET shows it.
expected<organization_view>
set_batch_retention(account_env& env, const principal& who,
                    std::optional<std::int64_t> seconds);

/// Everything the caller's organization holds but its jobs' rows (GET
/// /v2/organization/export). Owners and admins (403 otherwise, keys too).
expected<organization_export> export_organization(account_env& env,
                                                  const principal& who);

/// Erases the caller's organization and everything it owns (DELETE
/// /v2/organization) after checking the owner's `password` again: owners
/// only, a wrong password -> 403 and nothing erased. Its keys are refused
/// on every process before it returns; its members' tokens with it (the
/// membership is read per request). Returns the jobs that were active, for
/// this process to stop.
expected<std::vector<std::string>>
erase_organization(account_env& env, const principal& who,
                   const std::string& password);

/// Lists the caller's organization's members.
expected<std::vector<acc::member>> list_members(account_env& env,
                                                const principal& who);

/// Adds a member (owner/admin; only owners add owners).
expected<acc::member> add_member(account_env& env, const principal& who,
                                 const new_member_input& in);

/// Changes a member's role.
expected<acc::member> change_member_role(account_env& env, const principal& who,
                                         const std::string& user_id,
                                         acc::role r);

/// Removes a member; the last owner stays.
expected<unit> remove_member(account_env& env, const principal& who,
                             const std::string& user_id);

/// Creates a key (owner/admin; member -> 403 with the spec's message).
expected<created_key> create_key(account_env& env, const principal& who,
                                 const new_key_input& in);

/// The per-key limits new keys get when their creation names none.
acc::rate_limits default_key_limits(const config::settings& cfg);

/// Lists the organization's keys (any role).
expected<std::vector<acc::api_key>> list_keys(account_env& env,
                                              const principal& who);

/// Reads one key of the organization.
expected<acc::api_key> get_key(account_env& env, const principal& who,
                               const std::string& key_id);

/// Updates name/domains/config/limits/status (owner/admin).
expected<acc::api_key> update_key(account_env& env, const principal& who,
                                  const std::string& key_id,
                                  const key_patch& patch);

/// Sets a key's status (revoke / reactivate; owner/admin).
expected<acc::api_key> set_key_status(account_env& env, const principal& who,
                                      const std::string& key_id,
                                      acc::key_status status);

/// Deletes a key (owner/admin).
expected<unit> delete_key(account_env& env, const principal& who,
                          const std::string& key_id);

/// The organization's credit balance (any principal).
expected<acc::credit_balance> balance(account_env& env, const principal& who);

/// The organization's ledger, newest first.
expected<std::vector<acc::credit_entry>> transactions(account_env& env,
                                                      const principal& who,
                                                      std::int64_t limit,
                                                      std::int64_t before_id);

/// The statistics of one key of the caller's organization over the `days`
/// UTC days ending today (users only; days outside 1..365 ->
/// validation_failed; another organization's key -> not_found).
expected<core::usage::key_stats> usage_of_key(account_env& env,
                                              const principal& who,
                                              const std::string& key_id,
                                              int days);

/// The usage of all the organization's keys over the `days` UTC days
/// ending today (users only; days outside 1..365 -> validation_failed).
expected<organization_usage>
usage_of_organization(account_env& env, const principal& who, int days);

// -- access-token signing keys (use_cases/accounts/signing.cpp) ------------

/// The stored signing keys as the JWT code takes them, opened with the
/// server key (`webhooks.secret_key`, 64 hex digits): the secrets are
/// sealed in the database (security/secret_box.hpp) and held in plain only
/// in memory. A row that does not open -> errc::internal (another server
/// key sealed it); a plain row (written before keys were sealed) is taken
/// as it is.
expected<std::vector<security::jwt_key>>
signing_keys_of(const std::vector<acc::signing_key>& rows,
                std::string_view server_key_hex);

/// Loads the deployment's signing keys into `ring`, storing a fresh random
/// key (sealed with the server key) first when the database holds none
/// (the first start of the first process), and sealing in place the keys
/// an older version stored in plain text. Not for a ring of a configured
/// secret.
expected<unit> load_signing_keys(storage::store& db,
                                 security::jwt_keyring& ring,
                                 std::string_view server_key_hex);

/// Makes a fresh random key, sealed with the server key, the signing key of
/// the deployment; the retired ones keep verifying the tokens they signed
/// for `keep_seconds`, or are dropped at once when `drop_old` (every access
/// token signed before is then refused). Returns the new key's id.
expected<std::string> rotate_signing_key(storage::store& db,
                                         std::string_view server_key_hex,
                                         std::int64_t keep_seconds,
                                         bool drop_old);

} // namespace mailassay::use_cases::accounts
