#include "core/account/permissions.hpp"
#include "core/base/ascii.hpp"
#include "core/batch/retention.hpp"
#include "security/password.hpp"
#include "security/random.hpp"
#include "use_cases/accounts/audit.hpp"
#include "use_cases/accounts/key_cache.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <algorithm>
#include <cctype>

namespace mailassay::use_cases::accounts {

namespace {

using core::errc;
using core::make_error;

// Loads a member of the caller's organization; other tenants' users are
// indistinguishable from missing ones.
expected<acc::member> member_of(account_env& env, const principal& who,
                                const std::string& user_id) {
  auto m = env.db.find_member(user_id);
  // One answer for an unknown id and another organization's user: the
  // same status and message, so ids cannot be probed across tenants.
  if ((!m && m.error_value().code == errc::not_found) ||
      (m && m->organization_id != who.organization_id()))
    return make_error(errc::not_found, "Member not found");
  return m;
}

} // namespace

expected<me_view> me(account_env& env, const principal& who) {
  auto org = env.db.get_organization(who.organization_id());
  if (!org)
    return std::move(org).error_value();
  // The next `me` of a cached key is answered without storage.
  env.keys.put_organization(*org);
  me_view view{who, std::nullopt, std::move(*org)};
  if (who.type == principal::kind::user) {
    auto m = env.db.find_member(who.user_id);
    if (!m)
      return std::move(m).error_value();
    view.person = std::move(m->person);
  }
  return view;
}

expected<organization_view> organization(account_env& env,
                                         const principal& who) {
  auto org = env.db.get_organization(who.organization_id());
  if (!org)
    return std::move(org).error_value();
  auto members = env.db.list_members(who.organization_id());
  if (!members)
    return std::move(members).error_value();
  auto bal = env.db.get_balance(who.organization_id());
  if (!bal)
    return std::move(bal).error_value();
  return organization_view{std::move(*org),
                           static_cast<std::int64_t>(members->size()),
                           std::move(*bal)};
}

expected<organization_view>
set_batch_retention(account_env& env, const principal& who,
                    std::optional<std::int64_t> seconds) {
  if (who.key || !acc::may_set_retention(who.role))
    return make_error(errc::forbidden,
                      "Only owners can change the organization's retention");
  if (seconds)
    if (auto why = core::batch::organization_retention_refusal(
            *seconds, env.cfg.batch.retention_seconds)) {
      auto e = make_error(errc::validation_failed, *why);
      e.details.push_back(*why);
      return e;
    }
  if (auto set = env.db.set_batch_retention(who.organization_id(), seconds);
      !set)
    return std::move(set).error_value();
  record_audit(env, who, "organization.updated", who.organization_id(),
               {{"batchRetentionSeconds",
                 seconds ? nlohmann::json(*seconds) : nlohmann::json()}});
  return organization(env, who);
}

expected<std::vector<acc::member>> list_members(account_env& env,
                                                const principal& who) {
  return env.db.list_members(who.organization_id());
}

expected<acc::member> add_member(account_env& env, const principal& who,
                                 const new_member_input& in) {
  if (!acc::may_manage_members(who.role))
    return make_error(errc::forbidden,
                      "Only owners and admins can manage members");
  if (!acc::may_assign_role(who.role, acc::role::member, in.role))
    return make_error(errc::forbidden, "Only owners can add owners");
  acc::user person;
  person.id = security::new_id("usr");
  person.email = core::ascii_lower(in.email);
  person.name = in.name;
  person.password_hash = security::hash_password(in.password);
  person.created_at = env.now;
  if (person.password_hash.empty())
    return make_error(errc::internal, "password hashing failed");
  if (auto ok = env.db.add_member(who.organization_id(), person, in.role);
      !ok) {
    if (ok.error_value().code == errc::conflict)
      return make_error(errc::conflict,
                        "An account with this email already exists");
    return std::move(ok).error_value();
  }
  record_audit(env, who, "member.added", person.id,
               {{"role", acc::to_string(in.role)}});
  return acc::member{std::move(person), who.organization_id(), in.role};
}

expected<acc::member> change_member_role(account_env& env, const principal& who,
                                         const std::string& user_id,
                                         acc::role r) {
  if (!acc::may_manage_members(who.role))
    return make_error(errc::forbidden,
                      "Only owners and admins can manage members");
  auto target = member_of(env, who, user_id);
  if (!target)
    return target;
  if (!acc::may_assign_role(who.role, target->member_role, r))
    return make_error(errc::forbidden,
                      "Only owners can create, change or demote owners");
  if (auto ok = env.db.update_member_role(who.organization_id(), user_id, r);
      !ok)
    return std::move(ok).error_value();
  record_audit(env, who, "member.role_changed", user_id,
               {{"from", acc::to_string(target->member_role)},
                {"to", acc::to_string(r)}});
  target->member_role = r;
  return target;
}

expected<unit> remove_member(account_env& env, const principal& who,
                             const std::string& user_id) {
  if (!acc::may_manage_members(who.role))
    return make_error(errc::forbidden,
                      "Only owners and admins can manage members");
  auto target = member_of(env, who, user_id);
  if (!target)
    return std::move(target).error_value();
  if (!acc::may_assign_role(who.role, target->member_role, target->member_role))
    return make_error(errc::forbidden, "Only owners can remove owners");
  auto removed = env.db.remove_member(who.organization_id(), user_id);
  if (removed)
    record_audit(env, who, "member.removed", user_id,
                 {{"role", acc::to_string(target->member_role)}});
  return removed;
}

} // namespace mailassay::use_cases::accounts
