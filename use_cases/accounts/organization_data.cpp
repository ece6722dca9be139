#include "core/account/permissions.hpp"
#include "core/usage/calendar.hpp"
#include "security/password.hpp"
#include "use_cases/accounts/audit.hpp"
#include "use_cases/accounts/key_cache.hpp"
#include "use_cases/accounts/key_changes.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <limits>

namespace mailassay::use_cases::accounts {

namespace {

using core::errc;
using core::make_error;

// Pages of the ledger read per query while exporting it whole.
constexpr std::int64_t ledger_page = 1000;

// More jobs than an organization can make in its lifetime at the upload
// limits; the export lists them all.
constexpr std::int64_t all_jobs = std::numeric_limits<std::int32_t>::max();

} // namespace

expected<organization_export> export_organization(account_env& env,
                                                  const principal& who) {
  if (who.key || !acc::may_erase_data(who.role))
    return make_error(errc::forbidden,
                      "Only owners and admins can export the organization");
  const auto& org_id = who.organization_id();
  organization_export out;
  out.exported_at = env.now;
  auto org = organization(env, who);
  if (!org)
    return std::move(org).error_value();
  out.organization = std::move(*org);
  auto members = env.db.list_members(org_id);
  if (!members)
    return std::move(members).error_value();
  out.members = std::move(*members);
  auto keys = env.db.list_api_keys(org_id);
  if (!keys)
    return std::move(keys).error_value();
  out.keys = std::move(*keys);
  auto hooks = env.db.list_webhooks(org_id);
  if (!hooks)
    return std::move(hooks).error_value();
  out.webhooks = std::move(*hooks);
  auto usage = usage_of_organization(env, who, core::usage::max_window_days);
  if (!usage)
    return std::move(usage).error_value();
  out.usage = std::move(*usage);
  for (std::int64_t before = 0;;) {
    auto page = env.db.list_credit_entries(org_id, ledger_page, before);
    if (!page)
      return std::move(page).error_value();
    out.ledger.insert(out.ledger.end(), page->begin(), page->end());
    if (static_cast<std::int64_t>(page->size()) < ledger_page)
      break;
    before = page->back().id;
  }
  auto jobs = env.db.list_batch_jobs(org_id, all_jobs, std::nullopt);
  if (!jobs)
    return std::move(jobs).error_value();
  out.jobs = std::move(*jobs);
  record_audit(env, who, "organization.exported", org_id);
  return out;
}

expected<std::vector<std::string>>
erase_organization(account_env& env, const principal& who,
                   const std::string& password) {
  if (who.key || !acc::may_erase_organization(who.role))
    return make_error(errc::forbidden,
                      "Only owners can delete the organization");
  auto me = env.db.find_member(who.user_id);
  if (!me)
    return std::move(me).error_value();
  // The password again: a stolen session alone cannot erase everything.
  if (!security::verify_password(password, me->person.password_hash))
    return make_error(errc::forbidden, "The password is not correct");
  auto mark = echo_mark(env);
  auto erased = env.db.erase_organization(who.organization_id());
  if (!erased)
    return std::move(erased).error_value();
  // Its keys are refused on every process before the answer, as a revoke's.
  for (const auto& hash : erased->key_hashes)
    settle_key_change(env, hash, mark);
  return std::move(erased->active_jobs);
}

} // namespace mailassay::use_cases::accounts
