#pragma once

// Recording a change in the audit log (docs/privacy.md, "Audit log"), and
// reading it back (GET /v2/audit-log).

#include "use_cases/accounts/types.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::use_cases::accounts {

/// Records `action` on `target` by `who` in its organization, with a small
/// `details` object (never a secret nor a customer's address). After the
/// change committed, in the same storage job: a failure to record is
/// logged (`audit_record_failed`) and does not undo the change.
void record_audit(account_env& env, const principal& who,
                  std::string_view action, std::string target,
                  const nlohmann::json& details = nlohmann::json::object());

/// Records a failed login to `m`'s account from `env.client_ip` (folded
/// into one entry per account, address and window by the store). The actor
/// is empty: nobody signed in.
void record_login_failure(account_env& env, const acc::member& m);

/// One page of the organization's audit log, newest first (owners and
/// admins; members and API keys -> 403).
expected<std::vector<acc::audit_entry>>
audit_log(account_env& env, const principal& who, std::int64_t limit,
          std::int64_t before_id, const std::optional<std::string>& action);

} // namespace mailassay::use_cases::accounts
