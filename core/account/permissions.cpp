#include "core/account/permissions.hpp"

namespace mailassay::core::account {

bool may_manage_keys(role actor) {
  return actor == role::owner || actor == role::admin;
}

bool may_manage_members(role actor) {
  return actor == role::owner || actor == role::admin;
}

bool may_erase_data(role actor) {
  return actor == role::owner || actor == role::admin;
}

bool may_set_retention(role actor) {
  return actor == role::owner;
}

bool may_erase_organization(role actor) {
  return actor == role::owner;
}

bool may_assign_role(role actor, role current, role wanted) {
  if (!may_manage_members(actor))
    return false;
  if (actor == role::owner)
    return true;
  // An admin manages admins and members, never owners.
  return current != role::owner && wanted != role::owner;
}

bool publishable(const api_key& k) {
  return !k.allowed_domains.empty();
}

bool may_use_key(const api_key& k, key_use use) {
  if (!publishable(k))
    return true;
  return use == key_use::widget_validation || use == key_use::validation;
}

job_scope job_scope_of(const api_key* k) {
  if (!k)
    return job_scope::all;
  return mode_of(*k) == key_mode::test ? job_scope::sandbox_only
                                       : job_scope::live_only;
}

bool in_job_scope(job_scope scope, bool sandbox) {
  switch (scope) {
    case job_scope::all: return true;
    case job_scope::live_only: return !sandbox;
    case job_scope::sandbox_only: return sandbox;
  }
  return false;
}

} // namespace mailassay::core::account
