// The error body's direct writer against nlohmann's rendering of the same
// object: generated messages, with and without characters that need
// escaping, UTF-8 and bytes that are not UTF-8, for every error kind.
#include "http/codec/error.hpp"
#include "http/errors.hpp"
#include "tests/http_unit/generator.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace mailassay;
using core::errc;
using mailassay::testing::generator;
using nlohmann::json;

namespace {

// What the body was before the direct writer (nlohmann, invalid UTF-8 as
// U+FFFD), for the kinds it writes.
std::string reference(const core::error& e) {
  auto message = e.code == errc::internal ? std::string{"Internal server error"}
                                          : e.message;
  return json{{"message", message},
              {"code", http::code_of(e.code)},
              {"statusCode", http::status_of(e.code)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string message(generator& g) {
  static const std::vector<std::string> pieces{
      "Cannot GET /v2/",
      "Unauthorized",
      "a",
      "Z",
      " ",
      "~",
      "/",
      "%",
      "\"",
      "\\",
      "\n",
      "\t",
      "\x01",
      "\x7f",
      "é",
      "名",
      "\xFF",
      "\xC3",
      "rate limit exceeded (100 requests per minute)"};
  std::string s;
  auto n = g.below(6);
  for (std::size_t i = 0; i < n; ++i)
    s += g.pick(pieces);
  return s;
}

} // namespace

TEST_SUITE("http.errors") {
  TEST_CASE("error bodies are byte for byte what nlohmann writes") {
    const std::vector<errc> kinds{errc::bad_request,
                                  errc::unauthorized,
                                  errc::no_authorization,
                                  errc::insufficient_credits,
                                  errc::forbidden,
                                  errc::not_found,
                                  errc::conflict,
                                  errc::active_job_exists,
                                  errc::results_erased,
                                  errc::payload_too_large,
                                  errc::rate_limited,
                                  errc::method_not_allowed,
                                  errc::unavailable,
                                  errc::internal};
    generator g{0x6572726f72};
    for (int i = 0; i < 20000; ++i) {
      auto e = core::make_error(g.pick(kinds), message(g));
      CAPTURE(e.message);
      REQUIRE(http::codec::error_body(e) == reference(e));
    }
  }

  TEST_CASE("the common bodies read as the spec's error format") {
    auto body = json::parse(http::codec::error_body(
        core::make_error(errc::not_found, "Cannot GET /x")));
    CHECK(body == json{{"code", "NOT_FOUND"},
                       {"message", "Cannot GET /x"},
                       {"statusCode", 404}});
  }
}
