// written_as_is(), the direct writers' eight-bytes-at-a-time test, against
// its readable meaning: nlohmann's dump of the string is the string between
// quotes (and does not throw). Generated strings put every kind of byte at
// every place of a word, and at the tail after the last whole word.
#include "http/codec/json_text.hpp"
#include "tests/http_unit/generator.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace mailassay;
using mailassay::testing::generator;

namespace {

bool reference(const std::string& s) {
  try {
    return nlohmann::json(s).dump() == '"' + s + '"';
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// Mostly plain text, with now and then a byte of one of the classes the
// test tells apart, and now and then UTF-8 (whole or cut).
std::string generated(generator& g) {
  static const std::vector<std::string> odd{
      "\"",   "\\",   std::string(1, '\0'), "\x1f", "\x20",         "\t",
      "\n",   "\x7f", "\xc3\xa9",           "\xc3", "\xe2\x82\xac", "\xe2\x82",
      "\xff", "\x80", "\xf0\x9f\x98\x80"};
  std::string s;
  auto n = g.below(40);
  while (s.size() < n) {
    if (g.chance(8))
      s += g.pick(odd);
    else
      s += static_cast<char>(0x21 + g.below(0x7f - 0x21));
  }
  return s;
}

} // namespace

TEST_SUITE("json text") {
  TEST_CASE("written_as_is says what nlohmann's dump says, byte for byte") {
    generator g{0x6a736f6e};
    int as_is = 0;
    for (int i = 0; i < 200000; ++i) {
      auto s = generated(g);
      bool expected = reference(s);
      as_is += expected;
      if (http::codec::written_as_is(s) != expected)
        FAIL_CHECK(
            "differs for " << nlohmann::json(s).dump(
                -1, ' ', true, nlohmann::json::error_handler_t::replace));
    }
    // Both answers were exercised.
    CHECK(as_is > 20000);
    CHECK(as_is < 180000);
  }

  TEST_CASE("each byte that needs escaping is found at every offset") {
    for (int c : {0x00, 0x01, 0x1f, int{'"'}, int{'\\'}}) {
      for (std::size_t len = 1; len <= 24; ++len) {
        for (std::size_t at = 0; at < len; ++at) {
          std::string s(len, 'a');
          s[at] = static_cast<char>(c);
          CAPTURE(c);
          CAPTURE(len);
          CAPTURE(at);
          CHECK_FALSE(http::codec::written_as_is(s));
        }
      }
    }
    // The bytes just beside them pass.
    for (int c : {0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7e, 0x7f})
      CHECK(http::codec::written_as_is(std::string(17, static_cast<char>(c))));
  }
}
