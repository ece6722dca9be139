#pragma once

#include "use_cases/accounts/types.hpp"

#include <cstdint>
#include <string>

namespace mailassay::use_cases::accounts {

/// Before a key change: where a notification starts counting as its echo.
std::uint64_t echo_mark(const account_env& env);

/// After a key change committed (an update, a delete, an organization's
/// erase): this process forgets the key at once, and returns only once
/// every process listening acknowledged it (at most a few seconds), so no
/// process still holds the old key when the client tries it there
/// (actors/cluster_events.hpp).
void settle_key_change(account_env& env, const std::string& key_hash,
                       std::uint64_t mark);

} // namespace mailassay::use_cases::accounts
