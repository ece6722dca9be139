#pragma once

// The API key documents: creation and PATCH bodies, the key record, its
// options and limits, the key list and the rate-limits overview.

#include "core/base/expected.hpp"
#include "http/codec/json_text.hpp"
#include "http/exchange.hpp"
#include "use_cases/accounts/types.hpp"

#include <vector>

namespace mailassay::http::codec {

/// A creation body: {name, allowedDomains?, config?, mode?, rateLimits?}.
core::expected<use_cases::accounts::new_key_input>
new_key(const request_view& req);

/// A PATCH body: {name?, allowedDomains?, config?, rateLimits?}.
core::expected<use_cases::accounts::key_patch>
key_update(const request_view& req);

/// "test" for a `svc_test_` key, else "live".
const char* key_mode(const core::account::api_key& k);

/// {smtp, disposable, roleAccount, enrichment, randomDetection}.
json key_config(const core::account::key_config& c);

/// {perMinute, perHour, perDay}, null where no window is set.
json rate_limits(const core::account::rate_limits& l);

/// A key record (never its secret).
json api_key(const core::account::api_key& k);

/// A key record with its secret in clear (`key`): the answer of a creation.
json created_key(const use_cases::accounts::created_key& k);

/// The keys of an organization: {items: [key]}.
json key_list(const std::vector<core::account::api_key>& keys);

/// `GET /v2/api-keys/rate-limits`: {defaults, keys: [{id, name, perMinute,
/// perHour, perDay}]}.
json key_rate_limits(const core::account::rate_limits& defaults,
                     const std::vector<core::account::api_key>& keys);

} // namespace mailassay::http::codec
