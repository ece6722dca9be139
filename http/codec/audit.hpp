#pragma once

// The audit log's documents (docs/api.md, "Audit log"): one page of
// GET /v2/audit-log and its query.

#include "core/account/audit.hpp"
#include "core/base/expected.hpp"
#include "http/codec/json_text.hpp"
#include "http/exchange.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mailassay::http::codec {

/// The query of GET /v2/audit-log.
struct audit_query {
  std::int64_t limit = 50;
  std::int64_t before = 0;
  std::optional<std::string> action;
};

/// Reads `limit` (1-200, default 50), `before` (an entry id) and `action`
/// (one of the recorded actions); one 422 message per bad parameter.
core::expected<audit_query> audit_log_query(const request_view& req);

/// {id, at, action, actor: {type, id}, target, ip, details, occurrences}.
json audit_entry(const core::account::audit_entry& e);

/// One page: {items, nextBefore}; nextBefore is the last entry's id when the
/// page is full, else null.
json audit_page(const std::vector<core::account::audit_entry>& rows,
                std::int64_t limit);

} // namespace mailassay::http::codec
