#pragma once

// The audit log's records and its rules (docs/privacy.md, "Audit log"):
// which changes an administrator cares about are recorded, by whom, and how
// failed logins are folded into bursts.

#include "core/account/records.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mailassay::core::account {

/// Who made a change: a signed-in user, an API key, or the operator at the
/// server (`mailassay admin`).
enum class audit_actor { user, api_key, operator_cli };

/// Returns "user", "api_key" or "operator".
std::string_view to_string(audit_actor a);

/// One recorded change of an organization.
struct audit_entry {
  std::int64_t id = 0; ///< Increasing: the list's cursor.
  std::string organization_id;
  unix_time at = 0; ///< The last occurrence, for a burst.
  std::string action;
  audit_actor actor_type = audit_actor::user;
  std::string actor_id; ///< A user id, a key id, or "cli".
  std::string target;   ///< The id the change concerns ("" for none).
  std::string ip;       ///< The client's address ("" for the CLI).
  /// A small JSON object (never a secret nor a customer's address).
  std::string details = "{}";
  /// How many times a burst (`auth.login_failed`) happened; 1 otherwise.
  std::int64_t occurrences = 1;
};

/// Every action the audit log records, in the documented order.
std::span<const std::string_view> audit_actions();

/// Whether `action` is one of `audit_actions()`.
bool is_audit_action(std::string_view action);

/// The action under which failed logins of one account are folded: one
/// entry per account and client address for `login_failure_window` seconds,
/// its `occurrences` counting them, so a password-guessing run is one line,
/// not thousands.
inline constexpr std::string_view login_failed_action = "auth.login_failed";

/// The window of one burst of failed logins, seconds.
inline constexpr std::int64_t login_failure_window = 600;

} // namespace mailassay::core::account
