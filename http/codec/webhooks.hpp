#pragma once

// JSON of the webhook endpoints (docs/webhooks.md, http/openapi.json): the
// request decoders, the records, and the event bodies deliveries carry.
// JSON field names of webhooks live here and nowhere else.

#include "core/base/expected.hpp"
#include "core/webhooks/records.hpp"
#include "http/codec/json_text.hpp"
#include "http/exchange.hpp"
#include "use_cases/webhooks/use_cases.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mailassay::http::codec {

/// A creation body: {url, events, description?, creditsLowThreshold?}.
core::expected<use_cases::webhooks::new_endpoint_input>
new_endpoint(const request_view& req);

/// A PATCH body: {url?, events?, description?, status?,
/// creditsLowThreshold?}.
core::expected<use_cases::webhooks::endpoint_patch>
endpoint_update(const request_view& req);

/// An endpoint record (never its secret).
json endpoint(const core::webhooks::endpoint& w);

/// An endpoint record with its signing secret in clear: the answer of a
/// creation or a rotation.
json endpoint_with_secret(const use_cases::webhooks::endpoint_with_secret& e);

/// A delivery with its attempts and next retry.
json delivery(const core::webhooks::delivery& d);

/// The endpoints of an organization: {items: [endpoint]}.
json endpoint_list(const std::vector<core::webhooks::endpoint>& list);

/// The deliveries of an endpoint: {items: [delivery]}.
json delivery_list(const std::vector<core::webhooks::delivery>& list);

/// The body a delivery sends:
/// {id, type, createdAt, organizationId, data}; `data` holds the job
/// record and its export URL (batch.*), the key (key.revoked), the balance
/// and threshold (credits.low) or the endpoint id (ping); the job or key
/// as `subject` holds it, else its id. `public_url` prefixes the export
/// URL; `now` (Unix seconds) is unused by finished jobs but completes the
/// job record.
std::string event_body(const core::webhooks::delivery& d,
                       const use_cases::webhooks::event_subject& subject,
                       const std::string& public_url, std::int64_t now);

} // namespace mailassay::http::codec
