#pragma once

#include "config/settings.hpp"
#include "core/account/records.hpp"
#include "core/batch/job.hpp"
#include "core/webhooks/records.hpp"
#include "core/usage/stats.hpp"
#include "storage/store.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::security {
class jwt_keyring;
} // namespace mailassay::security

namespace mailassay::use_cases::accounts {

class key_cache;
class change_echo;

namespace acc = core::account;
using core::expected;
using core::unit;

/// What a request presented to prove who it is.
struct credentials {
  bool has_authorization = false; ///< An `Authorization` header was sent.
  /// The bearer value ("" if not bearer): a view into the request, so
  /// credentials live no longer than their request (its exchange).
  std::string_view bearer;
  std::string origin_host; ///< Host of Origin (else Referer), or "".
};

/// Who is calling: a user (JWT) or an API key, always within one
/// organization.
struct principal {
  enum class kind { user, api_key } type = kind::user;
  std::string user_id;                ///< Users only.
  acc::role role = acc::role::member; ///< Users only.
  /// Users only; a key carries its own (no copy per request).
  std::string user_organization_id;
  /// API keys only; shared with the key cache, which never changes an
  /// entry in place (a refresh replaces it).
  std::shared_ptr<const acc::api_key> key;

  /// The organization acting.
  const std::string& organization_id() const {
    return key ? key->organization_id : user_organization_id;
  }

  /// Whether its validations (real-time, widget, batch) are answered by the
  /// sandbox: a test key's are (no DNS, no SMTP, no credits); a live key's
  /// and a user's never.
  bool sandbox() const {
    return key && acc::mode_of(*key) == acc::key_mode::test;
  }
};

/// Everything a use case may touch; built per job by a storage worker.
struct account_env {
  storage::store& db;
  const config::settings& cfg;
  key_cache& keys;
  /// Signs and verifies access tokens; reloaded from `db` when a token
  /// names a key this process does not know yet (a rotation).
  security::jwt_keyring& jwt;
  std::int64_t now; ///< Unix seconds at the start of the job.
  /// Other processes sharing PostgreSQL hear of changes; a writer waits
  /// for its own echo before answering (use_cases/accounts/change_echo.hpp).
  /// Null when nobody listens (SQLite).
  const change_echo* echo = nullptr;
  /// The client's address as the HTTP layer saw it, for the audit log (""
  /// when no client asked: the CLI, tests).
  std::string client_ip;
};

/// A logged-in session: user, organization, role and a token pair.
struct session {
  acc::user person;
  acc::organization org;
  acc::role role = acc::role::member;
  std::string access_token;
  std::string refresh_token;
  std::int64_t expires_in = 0;
};

/// Fields of a sign-up, already type-checked by http/.
struct signup_input {
  std::string organization_name;
  std::string email;
  std::string password;
  std::string name;
};

/// Fields of a new member, already type-checked by http/.
struct new_member_input {
  std::string email;
  std::string password;
  std::string name;
  acc::role role = acc::role::member;
};

/// Fields of a new API key, already type-checked by http/.
struct new_key_input {
  std::string name;
  std::vector<std::string> allowed_domains;
  acc::key_config config;
  bool test = false; ///< `svc_test_` instead of `svc_live_`.
  std::optional<acc::rate_limits> limits;
};

/// Options of a key's config a PATCH names; the others keep their value.
struct config_patch {
  std::optional<bool> smtp, disposable, role_account, enrichment,
      random_detection;
};

/// A PATCH of a key: plain replacements plus a partial config.
struct key_patch {
  storage::api_key_update fields;
  std::optional<config_patch> config;
};

/// A created key: the record plus the secret, shown once.
struct created_key {
  acc::api_key key;
  std::string secret;
};

/// What `GET /v2/auth/me` shows.
struct me_view {
  principal who;
  std::optional<acc::user> person;
  acc::organization org;
};

/// An organization with its caller's view.
struct organization_view {
  acc::organization org;
  std::int64_t members = 0;
  acc::credit_balance balance;
};

/// One key's usage within an organization's window.
struct key_usage_view {
  std::string id;
  std::string name;  ///< "" when the key was deleted meanwhile.
  bool test = false; ///< A `svc_test_` key.
  std::int64_t requests = 0;
  std::int64_t successful = 0;
  std::int64_t credits = 0;
};

/// The usage of every key of an organization over a window of days.
struct organization_usage {
  int days = 0;
  core::usage::key_stats totals;    ///< As for one key, over all of them.
  std::vector<key_usage_view> keys; ///< Keys used, most requests first.
};

/// Everything an organization holds but its jobs' rows: the document of
/// GET /v2/organization/export (docs/privacy.md). Secrets stay out in the
/// codec (keys by prefix, users without password hashes, endpoints without
/// their signing secrets).
struct organization_export {
  organization_view organization;
  std::vector<acc::member> members;
  std::vector<acc::api_key> keys;
  std::vector<core::webhooks::endpoint> webhooks;
  organization_usage usage;              ///< The longest usage window.
  std::vector<acc::credit_entry> ledger; ///< Every entry, newest first.
  std::vector<core::batch::job> jobs;    ///< Records, newest first.
  std::int64_t exported_at = 0;          ///< Unix seconds.
};

} // namespace mailassay::use_cases::accounts
