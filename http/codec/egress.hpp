#pragma once

// The egress audit as JSON: `mailassay doctor --json` and the details of
// GET /health.

#include "core/egress/report.hpp"
#include "http/codec/json_text.hpp"

namespace mailassay::http::codec {

/// {ok, egressAddress, checks: [{name, status, detail}]}.
json egress_report(const core::egress::report& r);

} // namespace mailassay::http::codec
