#pragma once

#include "core/account/records.hpp"

namespace mailassay::core::account {

/// Owners and admins create, change and revoke API keys (spec: 403 for member).
bool may_manage_keys(role actor);

/// Owners and admins add, change and remove members.
bool may_manage_members(role actor);

/// Owners and admins erase the organization's data (a batch job, its
/// export); a member may not (docs/privacy.md).
bool may_erase_data(role actor);

/// Only an owner may create or promote owners, or change/remove an owner.
bool may_assign_role(role actor, role current, role wanted);
} // namespace mailassay::core::account
