// The audit log's rules (docs/privacy.md, "Audit log").
#include "core/account/audit.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace mailassay::core::account;

TEST_SUITE("core.account.audit") {
  TEST_CASE("the recorded actions are the documented ones, each once") {
    std::set<std::string_view> seen;
    for (auto a : audit_actions()) {
      CHECK(is_audit_action(a));
      CHECK(seen.insert(a).second);
    }
    CHECK(seen.size() == 17);
    for (auto a : {"api_key.created", "member.role_changed", "credits.granted",
                   "webhook.secret_rotated", "batch.deleted",
                   "organization.exported", "auth.login_failed"})
      CHECK(is_audit_action(a));
    for (auto a :
         {"", "api_key", "API_KEY.CREATED", "api_key.created ", "key.stolen"})
      CHECK_FALSE(is_audit_action(a));
    CHECK(is_audit_action(login_failed_action));
  }

  TEST_CASE("actors are named as the API shows them") {
    CHECK(to_string(audit_actor::user) == "user");
    CHECK(to_string(audit_actor::api_key) == "api_key");
    CHECK(to_string(audit_actor::operator_cli) == "operator");
  }
}
