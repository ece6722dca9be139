// http/query.hpp: a query string read parameter by parameter.
#include "http/query.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using mailassay::http::query_args;
using pairs = std::vector<std::pair<std::string, std::string>>;

TEST_SUITE("http.query") {
  TEST_CASE("legal unencoded characters are data, + is a space, %XX an "
            "octet") {
    struct row {
      const char* raw;
      pairs want;
    };
    for (auto& [raw, want] : std::vector<row>{
             {"", {}},
             {"a=1", {{"a", "1"}}},
             {"status=valid,risky&format=json",
              {{"status", "valid,risky"}, {"format", "json"}}},
             {"note=a;b:c@d/e?f!g*h(i)j'k$l",
              {{"note", "a;b:c@d/e?f!g*h(i)j'k$l"}}},
             {"q=a+b%20c%2Bd", {{"q", "a b c+d"}}},
             {"flag", {{"flag", ""}}},
             {"a=&b=", {{"a", ""}, {"b", ""}}},
             {"a=1&&b=2&", {{"a", "1"}, {"b", "2"}}},
             {"a=x=y", {{"a", "x=y"}}},
             {"n%61me=%C3%A9", {{"name", "\xC3\xA9"}}},
             {"raw=\xC3\xA9|^`{}", {{"raw", "\xC3\xA9|^`{}"}}},
         }) {
      CAPTURE(raw);
      auto q = query_args::parse(raw);
      REQUIRE(q.has_value());
      CHECK(q->items() == want);
    }
  }

  TEST_CASE("what cannot be read is refused naming the parameter") {
    struct row {
      const char* raw;
      const char* says;
    };
    for (auto [raw, says] : std::vector<row>{
             {"a=%", "value of parameter 'a'"},
             {"a=%4", "value of parameter 'a'"},
             {"a=%G0", "value of parameter 'a'"},
             {"a=%00", "value of parameter 'a'"},
             {"a=%0A", "value of parameter 'a'"},
             {"a=%7F", "value of parameter 'a'"},
             {"b=1&%zz=1", "name of parameter '%zz'"},
             {"=1", "a parameter has no name"},
             {"%20=1", nullptr},
         }) {
      CAPTURE(raw);
      auto q = query_args::parse(raw);
      if (!says) {
        CHECK(q.has_value());
        continue;
      }
      REQUIRE_FALSE(q.has_value());
      CHECK(q.error_value().code == mailassay::core::errc::bad_request);
      CHECK(q.error_value().message.find(says) != std::string::npos);
    }
  }

  TEST_CASE("unknown and repeated names are reported once each") {
    auto q = query_args::parse("a=1&x=2&a=3&x=4&b=5&a=6");
    REQUIRE(q.has_value());
    CHECK(q->problems("a,b") ==
          std::vector<std::string>{"query parameter a must be given only once",
                                   "query parameter x should not exist"});
    CHECK(q->problems("a,b,x").size() == 2);
    CHECK(query_args::parse("b=1")->problems("a,b").empty());
    CHECK(query_args::parse("ab=1")->problems("a,b").size() == 1);
    CHECK(*q->get("a") == "1");
    // Found by fuzz/query_fuzz.cpp: two long names alike in their first 64
    // bytes were reported twice in the same words.
    auto long_names = query_args::parse(std::string(70, 'n') + "a=1&" +
                                        std::string(70, 'n') + "b=2");
    CHECK(long_names->problems("x").size() == 1);
    CHECK_FALSE(q->get("c").has_value());
  }
}
