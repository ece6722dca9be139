#pragma once

// The batch job record, as GET /v2/batch/{jobId} shows it, and the job
// list; the webhook events (http/codec/webhooks.cpp) carry the same record.

#include "core/batch/job.hpp"
#include "http/codec/json_text.hpp"

#include <cstdint>
#include <vector>

namespace mailassay::http::codec {

/// The job record of `j` at `now` (Unix seconds; for etaSeconds).
json job_record(const core::batch::job& j, std::int64_t now);

/// The jobs of an organization: {items: [job record]}.
json job_list(const std::vector<core::batch::job>& jobs, std::int64_t now);

} // namespace mailassay::http::codec
