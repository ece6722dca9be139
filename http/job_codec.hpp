#pragma once

// The batch job record, as GET /v2/batch/{jobId} shows it; written by
// http/handlers/batch.cpp and shared with the webhook events
// (http/webhook_codec.cpp), so both show a job alike.

#include "core/batch/job.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace mailassay::http {

/// The job record of `j` at `now` (Unix seconds; for etaSeconds).
nlohmann::json job_json(const core::batch::job& j, std::int64_t now);

} // namespace mailassay::http
