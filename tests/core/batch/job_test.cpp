#include "core/batch/job.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::batch;
using mailassay::core::validation::status;

TEST_SUITE("core.batch.job") {
  TEST_CASE("a job fails at max_restarts take-overs in a row; 0 never") {
    struct row {
      std::int64_t restarts;
      std::int64_t max;
      bool exhausted;
    };
    for (auto r : {row{0, 3, false}, row{1, 3, false}, row{2, 3, false},
                   row{3, 3, true}, row{4, 3, true}, row{1, 1, true},
                   row{0, 1, false}, row{0, 0, false}, row{1000, 0, false}})
      CHECK_MESSAGE(restarts_exhausted(r.restarts, r.max) == r.exhausted,
                    r.restarts, "/", r.max);
  }

  TEST_CASE("the error of a job that kept stopping says how often") {
    auto e = kept_stopping_error(3);
    CHECK(e.code == "JOB_KEPT_STOPPING");
    CHECK(e.message.find("stopped 3 times in a row") != std::string::npos);
    CHECK(e.message.find("refunded") != std::string::npos);
  }

  TEST_CASE("results are counted by status") {
    status_counts c;
    for (auto s : {status::valid, status::valid, status::invalid, status::risky,
                   status::unknown, status::unknown})
      c.add(s);
    CHECK(c.valid == 2);
    CHECK(c.invalid == 1);
    CHECK(c.risky == 1);
    CHECK(c.unknown == 2);
  }

  TEST_CASE("an item's stored status is its result's name, or empty while "
            "pending") {
    struct row {
      bool done;
      status state;
      std::string_view text;
    };
    for (auto r :
         {row{true, status::valid, "valid"},
          row{true, status::invalid, "invalid"},
          row{true, status::risky, "risky"},
          row{true, status::unknown, "unknown"},
          row{false, status::unknown, ""}, row{false, status::valid, ""}}) {
      item it;
      it.done = r.done;
      it.status = r.state;
      CHECK(status_text(it) == r.text);
    }
  }

  TEST_CASE("job statuses round-trip through their names") {
    for (auto s :
         {job_status::queued, job_status::processing, job_status::completed,
          job_status::cancelled, job_status::failed})
      CHECK(parse_job_status(to_string(s)) == s);
    CHECK_FALSE(parse_job_status("done").has_value());
  }
}
