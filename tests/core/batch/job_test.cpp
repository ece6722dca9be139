#include "core/batch/job.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::batch;

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
}
