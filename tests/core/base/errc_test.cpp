#include "core/base/errc.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core;

TEST_SUITE("core.base.errc") {
  TEST_CASE("unauthorized is one refusal whatever the reason") {
    auto e = unauthorized();
    CHECK(e.code == errc::unauthorized);
    CHECK(e.message == "Unauthorized");
    CHECK(e.details.empty());
    CHECK(e.retry_after == 0);
  }
}
