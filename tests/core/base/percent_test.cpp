#include "core/base/percent.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>

using mailassay::core::hex_digit_value;
using mailassay::core::percent_decode;

TEST_SUITE("core.base.percent") {
  TEST_CASE("hex digits of either case have their value; others are -1") {
    CHECK(hex_digit_value('0') == 0);
    CHECK(hex_digit_value('9') == 9);
    CHECK(hex_digit_value('a') == 10);
    CHECK(hex_digit_value('F') == 15);
    CHECK(hex_digit_value('g') == -1);
    CHECK(hex_digit_value('%') == -1);
    CHECK(hex_digit_value(' ') == -1);
  }

  TEST_CASE("percent escapes decode; a broken one refuses the whole text") {
    struct row {
      const char* in;
      std::optional<std::string> out;
    };
    const row rows[] = {
        {"", std::string{}},
        {"plain", std::string{"plain"}},
        {"p%40ss%3Aw%2fd", std::string{"p@ss:w/d"}},
        {"a+b", std::string{"a+b"}}, // '+' is not a space outside forms
        {"%00", std::string{"\0", 1}},
        {"%", std::nullopt},
        {"%4", std::nullopt},
        {"ab%4", std::nullopt},
        {"%4g", std::nullopt},
        {"%%41", std::nullopt},
    };
    for (const auto& r : rows) {
      INFO("input: " << r.in);
      CHECK(percent_decode(r.in) == r.out);
    }
  }
}
