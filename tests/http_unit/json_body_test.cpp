// http/json_body.hpp: JSON bodies read strictly.
#include "http/json_body.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using mailassay::core::errc;
using mailassay::http::parse_json_body;
using namespace std::string_literals;

TEST_SUITE("http.json_body") {
  TEST_CASE("well-formed bodies parse as nlohmann parses them") {
    for (auto body : {R"({"a":1,"b":[1,2,{"c":null}],"d":"x"})", "[]", "3",
                      R"({"a":{"a":{"a":1}},"b":{"a":2}})",
                      R"([{"a":1},{"a":2}])", " {\"x\" : 1e308 } "}) {
      CAPTURE(body);
      auto j = parse_json_body(body);
      REQUIRE(j.has_value());
      CHECK(*j == nlohmann::json::parse(body));
    }
  }

  TEST_CASE("refusals: status and message") {
    struct row {
      std::string body;
      errc code;
      std::string says;
    };
    for (auto& [body, code, says] : std::vector<row>{
             {R"({"a":1})"s + '\0' + "junk", errc::bad_request,
              "Malformed JSON in request body"},
             {"{\"a\":\"x"s + '\0' + "\"}", errc::bad_request,
              "Malformed JSON in request body"},
             {"{\"a\":1", errc::bad_request, "Malformed JSON in request body"},
             {R"({"a":1} {"b":2})", errc::bad_request,
              "Malformed JSON in request body"},
             {R"({"a":1,"a":2})", errc::validation_failed,
              "property a must be given only once"},
             {R"({"c":{"s":true,"s":false}})", errc::validation_failed,
              "property c.s must be given only once"},
             {R"({"l":[{"k":1},{"k":2,"k":3}]})", errc::validation_failed,
              "property l.1.k must be given only once"},
             {R"({"t":1e400})", errc::validation_failed,
              "t must be a finite number"},
             {R"({"l":[1,2,-1E+999]})", errc::validation_failed,
              "l.2 must be a finite number"},
             {R"({"o":{"x":[0, 1e999]}})", errc::validation_failed,
              "o.x.1 must be a finite number"},
             {"1e400", errc::bad_request, "Request body must be a JSON object"},
             {std::string(40, '[') + std::string(40, ']'), errc::bad_request,
              "nested more than 32 levels"},
         }) {
      CAPTURE(body);
      auto j = parse_json_body(body);
      REQUIRE_FALSE(j.has_value());
      CHECK(j.error_value().code == code);
      auto text = j.error_value().message;
      for (auto& d : j.error_value().details)
        text += d;
      CHECK_MESSAGE(text.find(says) != std::string::npos, text);
    }
    // Same name in sibling objects is fine.
    CHECK(parse_json_body(R"([{"a":1},{"a":1}])").has_value());
    CHECK(parse_json_body(std::string(32, '[') + std::string(32, ']'))
              .has_value());
  }
}
