// The validation body's fast path (one `email` field) against nlohmann's
// reading of the same bytes: generated bodies, mutated around the common
// shape, must decode to what the parsed JSON holds, or fail as before.
#include "http/codec/validation.hpp"
#include "tests/http_unit/generator.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace mailassay;
namespace codec = mailassay::http::codec;
using nlohmann::json;

namespace {

using mailassay::testing::generator;

// The view points into `body`, as a served view points into RESTinio's
// request: the caller keeps `body` alive while the view is used.
http::request_view body_request(std::string_view body,
                                const char* type = "application/json") {
  http::request_view req;
  req.method = "POST";
  req.path = "/v2/email/validate";
  req.body = body;
  if (type)
    req.headers.emplace_back("Content-Type", type);
  return req;
}

// What a body means to nlohmann: an object whose only field is a string
// `email` of 1 to 254 bytes is a request for that address, with the
// defaults; malformed JSON and non-objects are refused. Objects with other
// fields are left to the object reader (the code that was there before),
// which must still read `email` as nlohmann does.
struct meaning {
  bool decided = false; ///< The fields alone decide ok.
  bool ok = false;
  bool malformed = false;
  std::optional<std::string> email;
};

meaning reference(const std::string& body) {
  auto j = json::parse(body, nullptr, false);
  meaning m;
  m.malformed = j.is_discarded();
  if (!j.is_object()) {
    m.decided = true;
    return m;
  }
  if (j.contains("email") && j["email"].is_string())
    m.email = j["email"].get<std::string>();
  if (j.size() == 1 && j.contains("email")) {
    m.decided = true;
    m.ok = m.email && !m.email->empty() && m.email->size() <= 254;
  }
  return m;
}

const std::vector<std::string> seeds = {
    R"({"email":"jane.doe@example.com"})",
    R"( { "email" : "not-an-address" } )",
    "{\n\t\"email\":\r\n\"a@b.co\"\n}\n",
    R"({"email":""})",
    R"({"email":"x"})",
    R"({"email":"jane@example.com","smtp":true})",
    R"({"email":"M\u00fcller@example.com"})",
    "{\"email\":\"M\xc3\xbcller@example.com\"}",
    R"({"email":"quo\"te@example.com"})",
    R"({"email":null})",
    R"({"email":42})",
    R"({"Email":"jane@example.com"})",
    R"(["email","jane@example.com"])",
};

// Characters that matter to JSON, to insert or substitute.
const std::string alphabet = "{}[]:,\" \t\n\\/aZ@.-0u\x01\x7f\xc3\xff";

std::string mutate(generator& g, std::string s) {
  auto edits = 1 + g.below(3);
  for (std::size_t k = 0; k < edits; ++k) {
    auto at = g.below(s.size() + 1);
    switch (g.below(3)) {
      case 0: s.insert(at, 1, alphabet[g.below(alphabet.size())]); break;
      case 1:
        if (at < s.size())
          s.erase(at, 1);
        break;
      default:
        if (at < s.size())
          s[at] = alphabet[g.below(alphabet.size())];
    }
  }
  return s;
}

void check_body(const std::string& body) {
  auto want = reference(body);
  auto got = codec::validation(body_request(body));
  INFO("body: " << body);
  if (want.decided)
    REQUIRE(got.has_value() == want.ok);
  if (got) {
    REQUIRE(want.email.has_value());
    CHECK(got->email == *want.email);
    if (want.decided) {
      CHECK_FALSE(got->smtp);
      CHECK(got->timeout_ms == 10000);
    }
  } else if (want.malformed) {
    CHECK(got.error_value().code == core::errc::bad_request);
    CHECK(got.error_value().message == "Malformed JSON in request body");
  }
}

} // namespace

TEST_SUITE("http.codec") {
  TEST_CASE("a one-field body reads as nlohmann reads it") {
    for (const auto& s : seeds)
      check_body(s);
    check_body("{\"email\":\"" + std::string(254, 'a') + "\"}");
    check_body("{\"email\":\"" + std::string(255, 'a') + "\"}");
  }

  TEST_CASE("mutated bodies read as nlohmann reads them") {
    generator g{0x626f6479};
    for (int i = 0; i < 30000; ++i)
      check_body(mutate(g, seeds[g.below(seeds.size())]));
  }

  TEST_CASE("the fast path keeps the content-type check") {
    auto r = codec::validation(
        body_request(R"({"email":"jane@example.com"})", "text/plain"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == core::errc::bad_request);
    CHECK(r.error_value().message == "Content-Type must be application/json");
    auto none = codec::validation(
        body_request(R"({"email":"jane@example.com"})", nullptr));
    REQUIRE(none.has_value());
    CHECK(none->email == "jane@example.com");
    auto widget = codec::widget_validation(body_request(
        R"({"email":"jane@example.com"})", "application/json; charset=utf-8"));
    REQUIRE(widget.has_value());
    CHECK(widget->email == "jane@example.com");
  }

  TEST_CASE("an address over 254 bytes is refused as before") {
    auto r = codec::validation(
        body_request("{\"email\":\"" + std::string(255, 'a') + "\"}"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == core::errc::validation_failed);
    REQUIRE(r.error_value().details.size() == 1);
    CHECK(r.error_value().details[0] ==
          "email must be shorter than or equal to 254 octets");
  }
}
