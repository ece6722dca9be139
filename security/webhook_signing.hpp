#pragma once

// Webhook signing secrets and signatures (docs/webhooks.md): the HMAC half
// of core/webhooks/signature.hpp.

#include <cstdint>
#include <string>
#include <string_view>

namespace mailassay::security {

/// Returns a new signing secret: "whsec_" + 40 base62 characters (238
/// bits). The HMAC key is the whole string, as the receiver holds it.
std::string new_webhook_secret();

/// Returns the lower-case hex HMAC-SHA256 of "<t>.<body>" under `secret`.
std::string webhook_signature(std::string_view secret, std::int64_t t,
                              std::string_view body);

} // namespace mailassay::security
