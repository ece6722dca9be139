#include "http/codec/batch_job.hpp"

#include "core/base/time_format.hpp"
#include "core/batch/progress.hpp"

namespace mailassay::http::codec {

namespace {

json time_or_null(const std::optional<std::int64_t>& t) {
  return t ? json(core::iso8601(*t)) : json(nullptr);
}

} // namespace

json job_record(const core::batch::job& j, std::int64_t now) {
  return {{"id", j.id},
          {"organizationId", j.organization_id},
          {"status", core::batch::to_string(j.status)},
          {"fileName", j.file_name},
          {"emailColumn",
           j.email_column.empty() ? json(nullptr) : json(j.email_column)},
          {"totalRows", j.total_rows},
          {"uniqueEmails", j.unique_emails},
          {"duplicatesRemoved", j.duplicates_removed},
          {"invalidRows", j.invalid_rows},
          {"processed", j.processed},
          {"progress", core::batch::progress_percent(j)},
          {"counts",
           {{"valid", j.counts.valid},
            {"invalid", j.counts.invalid},
            {"risky", j.counts.risky},
            {"unknown", j.counts.unknown}}},
          {"smtp", j.smtp},
          {"sandbox", j.sandbox},
          {"deduplicate", j.deduplicate},
          {"creditsReserved", j.credits_reserved},
          {"creditsUsed", j.credits_used},
          {"createdAt", core::iso8601(j.created_at)},
          {"startedAt", time_or_null(j.started_at)},
          {"finishedAt", time_or_null(j.finished_at)},
          {"resultsErasedAt", time_or_null(j.results_erased_at)},
          {"etaSeconds", or_null(core::batch::eta_seconds(j, now))},
          {"error", j.error ? json{{"code", j.error->code},
                                   {"message", j.error->message}}
                            : json(nullptr)}};
}

json job_list(const std::vector<core::batch::job>& jobs, std::int64_t now) {
  auto out = json::array();
  for (auto& j : jobs)
    out.push_back(job_record(j, now));
  return json{{"items", out}};
}

} // namespace mailassay::http::codec
