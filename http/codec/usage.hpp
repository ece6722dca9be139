#pragma once

// The usage documents: one key's statistics (GET /v2/api-keys/{id}/stats)
// and the organization's (GET /v2/usage), which share their totals.

#include "core/usage/stats.hpp"
#include "http/codec/json_text.hpp"
#include "use_cases/accounts/types.hpp"

namespace mailassay::http::codec {

/// {totalRequests, successRate, creditsConsumed, topEmails,
/// requestsByDay: [{date, requests, successful, credits}]}.
json key_stats(const core::usage::key_stats& s);

/// The totals of `key_stats` over every key, with {days, keys: [{id, name,
/// mode, requests, successful, credits}]}.
json organization_usage(const use_cases::accounts::organization_usage& u);

} // namespace mailassay::http::codec
