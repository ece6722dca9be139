#pragma once

#include "actors/accounts/types.hpp"

#include <nlohmann/json.hpp>

// The organization-wide usage document (GET /v2/usage); its field names
// live here, beside the per-key statistics' (the same for the totals).
namespace mailassay::http::codec {

/// {days, totalRequests, successRate, creditsConsumed, topEmails,
/// requestsByDay: [{date, requests, successful, credits}], keys: [{id,
/// name, mode, requests, successful, credits}]}.
nlohmann::json
organization_usage(const actors::accounts::organization_usage& u);

} // namespace mailassay::http::codec
