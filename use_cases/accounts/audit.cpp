#include "use_cases/accounts/audit.hpp"

#include "core/account/permissions.hpp"
#include "log/log.hpp"

namespace mailassay::use_cases::accounts {

namespace {

void store_entry(account_env& env, const acc::audit_entry& e) {
  if (auto ok = env.db.record_audit(e); !ok)
    log::event(log::level::warn, "audit_record_failed",
               {{"action", e.action},
                {"organization", e.organization_id},
                {"why", ok.error_value().message}});
}

} // namespace

void record_audit(account_env& env, const principal& who,
                  std::string_view action, std::string target,
                  const nlohmann::json& details) {
  acc::audit_entry e;
  e.organization_id = who.organization_id();
  e.at = env.now;
  e.action = std::string{action};
  e.actor_type = who.key ? acc::audit_actor::api_key : acc::audit_actor::user;
  e.actor_id = who.key ? who.key->id : who.user_id;
  e.target = std::move(target);
  e.ip = env.client_ip;
  e.details = details.dump();
  store_entry(env, e);
}

void record_login_failure(account_env& env, const acc::member& m) {
  acc::audit_entry e;
  e.organization_id = m.organization_id;
  e.at = env.now;
  e.action = std::string{acc::login_failed_action};
  e.actor_type = acc::audit_actor::user;
  e.target = m.person.id;
  e.ip = env.client_ip;
  store_entry(env, e);
}

expected<std::vector<acc::audit_entry>>
audit_log(account_env& env, const principal& who, std::int64_t limit,
          std::int64_t before_id, const std::optional<std::string>& action) {
  if (who.key || !acc::may_erase_data(who.role))
    return core::make_error(core::errc::forbidden,
                            "Only owners and admins can read the audit log");
  return env.db.list_audit(who.organization_id(), limit, before_id, action);
}

} // namespace mailassay::use_cases::accounts
