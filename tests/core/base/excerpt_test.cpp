#include "core/base/excerpt.hpp"

#include <doctest/doctest.h>

#include <string>

TEST_SUITE("core.base.excerpt") {
  TEST_CASE("an excerpt keeps at most its length, and says when it cut") {
    using mailassay::core::excerpt;
    CHECK(excerpt("") == "");
    CHECK(excerpt("GET") == "GET");
    CHECK(excerpt(std::string(64, 'a')) == std::string(64, 'a'));
    CHECK(excerpt(std::string(65, 'a')) == std::string(64, 'a') + "...");
    CHECK(excerpt("abcdef", 3) == "abc...");
    CHECK(excerpt("abc", 3) == "abc");
  }
}
