#include "core/batch/progress.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::batch;

namespace {

job running(std::int64_t unique, std::int64_t invalid, std::int64_t processed,
            std::int64_t started_at) {
  job j;
  j.status = job_status::processing;
  j.unique_emails = unique;
  j.invalid_rows = invalid;
  j.processed = processed;
  j.started_at = started_at;
  return j;
}

} // namespace

TEST_SUITE("core.batch.progress") {
  TEST_CASE("progress is rounded down to a tenth of a percent") {
    struct row {
      std::int64_t unique, invalid, processed;
      double want;
    };
    for (auto r :
         {row{0, 0, 0, 100.0}, row{3, 0, 1, 33.3}, row{3, 0, 2, 66.6},
          row{1000, 0, 999, 99.9}, row{2, 2, 4, 100.0}, row{7, 0, 0, 0.0}}) {
      CAPTURE(r.processed);
      CHECK(progress_percent(running(r.unique, r.invalid, r.processed, 0)) ==
            r.want);
    }
  }

  TEST_CASE("a job that ended has nothing left") {
    for (auto s :
         {job_status::completed, job_status::cancelled, job_status::failed}) {
      auto j = running(10, 0, 3, 100);
      j.status = s;
      CHECK(eta_seconds(j, 200) == 0);
    }
  }

  TEST_CASE("nothing to measure before an address was validated") {
    auto queued = running(10, 0, 0, 100);
    queued.status = job_status::queued;
    CHECK_FALSE(eta_seconds(queued, 200).has_value());
    CHECK_FALSE(eta_seconds(running(10, 4, 4, 100), 200).has_value());
    auto unstarted = running(10, 0, 5, 100);
    unstarted.started_at.reset();
    CHECK_FALSE(eta_seconds(unstarted, 200).has_value());
  }

  TEST_CASE("the time left is the average speed's, rounded up") {
    // 10 addresses in 20 s: 30 left take 60 s.
    CHECK(eta_seconds(running(40, 0, 10, 100), 120) == 60);
    // Invalid rows are done but cost no time: 2 addresses in 10 s, 3 left.
    CHECK(eta_seconds(running(5, 5, 7, 100), 110) == 15);
    // 3 in 2 s, 1 left: 0.67 s rounds up to 1.
    CHECK(eta_seconds(running(4, 0, 3, 100), 102) == 1);
    // Started this second: counted as one second.
    CHECK(eta_seconds(running(4, 0, 2, 100), 100) == 1);
  }
}
