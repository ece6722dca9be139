#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::account {

/// A member's role inside its organization.
enum class role { owner, admin, member };

/// Returns "owner", "admin" or "member".
std::string_view to_string(role r);

/// Parses a role name; nullopt for anything else.
std::optional<role> parse_role(std::string_view text);

/// Seconds since the Unix epoch, UTC. Time is always passed in.
using unix_time = std::int64_t;

/// An organization: the tenant every other record belongs to.
struct organization {
  std::string id;
  std::string name;
  unix_time created_at = 0;
  /// The owner's own retention of batch results, shorter than the server's
  /// (core/batch/retention.hpp); nullopt: the server's.
  std::optional<std::int64_t> batch_retention_seconds = std::nullopt;
};

/// A person who can log in. Belongs to exactly one organization.
struct user {
  std::string id;
  std::string email; ///< Lower-cased.
  std::string name;
  std::string password_hash; ///< Encoded slow hash (never the password).
  unix_time created_at = 0;
};

/// A user together with its organization and role.
struct member {
  user person;
  std::string organization_id;
  role member_role = role::member;
};

/// One refresh token of a rotation family; stored by hash only.
struct refresh_token {
  std::string id;
  std::string token_hash; ///< SHA-256 hex of the token.
  std::string family_id;  ///< Shared by every token of one login.
  std::string user_id;
  std::string organization_id;
  unix_time expires_at = 0;
  bool spent = false;   ///< Exchanged once already.
  bool revoked = false; ///< Family revoked (logout or reuse).
  unix_time created_at = 0;
};

/// What a key allows (the spec's `config`).
struct key_config {
  bool smtp = false;
  bool disposable = true;
  bool role_account = true;
  bool enrichment = false;
  bool random_detection = true;
};

/// Per-key rate limits; nullopt = unlimited.
struct rate_limits {
  std::optional<std::int64_t> per_minute;
  std::optional<std::int64_t> per_hour;
  std::optional<std::int64_t> per_day;
};

/// Key lifecycle state; deletion removes the row.
enum class key_status { active, revoked };

/// Returns "active" or "revoked".
std::string_view to_string(key_status s);

/// An API key as stored: the secret itself is never kept, only its hash.
struct api_key {
  std::string id;
  std::string organization_id;
  std::string name;
  std::string key_hash; ///< SHA-256 hex of the full key.
  std::string prefix;   ///< First 12 characters + "…", for display.
  std::vector<std::string> allowed_domains;
  key_config config;
  rate_limits limits;
  key_status status = key_status::active;
  unix_time created_at = 0;
  unix_time updated_at = 0;
};

/// What a key is for: `svc_live_` keys validate for real; `svc_test_` keys
/// are a sandbox (no DNS, no SMTP, no credits: core/validation/sandbox.hpp).
enum class key_mode { live, test };

/// Returns "live" or "test".
std::string_view to_string(key_mode m);

/// Returns the mode of `k`, told by the prefix it was minted with.
key_mode mode_of(const api_key& k);

/// An organization's credit account.
struct credit_balance {
  std::string organization_id;
  std::int64_t balance = 0;
  std::int64_t consumed = 0;
  unix_time updated_at = 0;
};

/// One ledger entry; `delta` is negative when credits are spent.
struct credit_entry {
  std::int64_t id = 0;
  std::string organization_id;
  std::int64_t delta = 0;
  std::string kind; ///< grant, signup, reserve, commit, refund.
  std::string reference;
  std::int64_t balance_after = 0;
  unix_time created_at = 0;
};

/// A key that signs access tokens (JWT HS256), shared by every process of a
/// deployment through the database (docs/deployment.md).
struct signing_key {
  std::string kid; ///< Key id, written in each token's header.
  /// The HMAC secret sealed with the server key (security/secret_box.hpp);
  /// in memory, once opened, the base62 secret itself. A database written
  /// before keys were sealed holds plain base62 text until the next start.
  std::string secret;
  unix_time created_at = 0;
  /// When a newer key took over; 0 while this one signs.
  unix_time retired_at = 0;
};

/// An organization as listed by the operator CLI.
struct organization_summary {
  organization org;
  std::int64_t members = 0;
  std::int64_t balance = 0;
};

} // namespace mailassay::core::account
