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

bool may_assign_role(role actor, role current, role wanted) {
  if (!may_manage_members(actor))
    return false;
  if (actor == role::owner)
    return true;
  // An admin manages admins and members, never owners.
  return current != role::owner && wanted != role::owner;
}

} // namespace mailassay::core::account
