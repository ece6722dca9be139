#include "core/batch/job.hpp"

namespace mailassay::core::batch {

std::string_view to_string(job_status s) {
  switch (s) {
    case job_status::queued: return "queued";
    case job_status::processing: return "processing";
    case job_status::completed: return "completed";
    case job_status::cancelled: return "cancelled";
    case job_status::failed: return "failed";
  }
  return "failed";
}

std::optional<job_status> parse_job_status(std::string_view text) {
  for (auto s :
       {job_status::queued, job_status::processing, job_status::completed,
        job_status::cancelled, job_status::failed})
    if (to_string(s) == text)
      return s;
  return std::nullopt;
}

void status_counts::add(validation::status s) {
  switch (s) {
    case validation::status::valid: ++valid; return;
    case validation::status::invalid: ++invalid; return;
    case validation::status::risky: ++risky; return;
    case validation::status::unknown: ++unknown; return;
  }
}

std::string_view status_text(const item& it) {
  return it.done ? validation::to_string(it.status) : std::string_view{};
}

bool is_active(job_status s) {
  return s == job_status::queued || s == job_status::processing;
}

job_error kept_stopping_error(std::int64_t restarts) {
  return {"JOB_KEPT_STOPPING",
          "The process running this job stopped " + std::to_string(restarts) +
              " times in a row before it could save any result; the job was "
              "given up and its unused credits refunded."};
}

bool restarts_exhausted(std::int64_t restarts, std::int64_t max_restarts) {
  return max_restarts > 0 && restarts >= max_restarts;
}

} // namespace mailassay::core::batch
