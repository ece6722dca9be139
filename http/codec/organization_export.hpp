#pragma once

// The organization's own data, taken out and erased (docs/privacy.md): the
// document of GET /v2/organization/export and the body of DELETE
// /v2/organization.

#include "core/base/expected.hpp"
#include "http/codec/json_text.hpp"
#include "http/exchange.hpp"
#include "use_cases/accounts/types.hpp"

#include <string>

namespace mailassay::http::codec {

/// {exportedAt, organization, members, apiKeys, webhooks, usage, ledger,
/// jobs}: each part as its own endpoint shows it, so without password
/// hashes, key secrets or hashes (prefixes only) and signing secrets.
json organization_export(const use_cases::accounts::organization_export& e);

/// The erase body: {password} (required, a string).
core::expected<std::string> erase_confirmation(const request_view& req);

} // namespace mailassay::http::codec
