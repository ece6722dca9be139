#include "core/account/audit.hpp"

#include <algorithm>
#include <array>

namespace mailassay::core::account {

namespace {

constexpr std::array<std::string_view, 17> actions = {
    "api_key.created",        "api_key.updated",   "api_key.revoked",
    "api_key.reactivated",    "api_key.deleted",   "member.added",
    "member.role_changed",    "member.removed",    "credits.granted",
    "webhook.created",        "webhook.updated",   "webhook.deleted",
    "webhook.secret_rotated", "batch.deleted",     "organization.updated",
    "organization.exported",  "auth.login_failed",
};

} // namespace

std::string_view to_string(audit_actor a) {
  switch (a) {
    case audit_actor::user: return "user";
    case audit_actor::api_key: return "api_key";
    case audit_actor::operator_cli: return "operator";
  }
  return "user";
}

std::span<const std::string_view> audit_actions() {
  return actions;
}

bool is_audit_action(std::string_view action) {
  return std::find(actions.begin(), actions.end(), action) != actions.end();
}

} // namespace mailassay::core::account
