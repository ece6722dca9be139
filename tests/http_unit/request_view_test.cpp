#include "http/exchange.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using mailassay::http::request_view;

namespace {

request_view with_headers(
    std::vector<std::pair<std::string_view, std::string_view>> headers) {
  request_view v;
  v.headers = std::move(headers);
  v.index_headers();
  return v;
}

} // namespace

TEST_SUITE("http.request_view") {
  TEST_CASE("header lookups find every spelling of a name the request holds") {
    auto v = with_headers({{"Host", "example.test"},
                           {"authorization", "Bearer abc"},
                           {"CONTENT-TYPE", "application/json"},
                           {"X-Request-Id", "r-1"}});
    CHECK(v.header("Authorization") == "Bearer abc");
    CHECK(v.header("AUTHORIZATION") == "Bearer abc");
    CHECK(v.header("Content-Type") == "application/json");
    CHECK(v.header("content-type") == "application/json");
    CHECK(v.header("x-request-id") == "r-1");
    CHECK(v.header("host") == "example.test");
  }

  TEST_CASE("header lookups of names the request does not hold find nothing") {
    auto v = with_headers({{"Host", "example.test"},
                           {"Authorization", "Bearer abc"},
                           {"Content-Type", "application/json"}});
    for (std::string_view name :
         {"Origin", "Referer", "X-Request-Id", "X-Forwarded-For", "Cookie",
          "X-Device-Id", "Content-Length", "Authorizatio", "Hosts", "", "H"})
      CHECK_FALSE(v.header(name).has_value());
  }

  TEST_CASE("a name sharing another's length and first and last letters is "
            "told apart by the walk") {
    // Same length (13), first letter and last letter as "Authorization".
    auto v = with_headers({{"Authorization", "Bearer abc"}});
    CHECK_FALSE(v.header("Anything-00xn").has_value());
    CHECK(v.header("authorizatioN") == "Bearer abc");
  }

  TEST_CASE("a view built without index_headers still finds its headers") {
    request_view v;
    v.headers = {{"Origin", "https://app.example.test"}};
    CHECK(v.header("origin") == "https://app.example.test");
    CHECK_FALSE(v.header("Referer").has_value());
  }

  TEST_CASE("a header spelled as asked wins, else the first in any case") {
    auto v =
        with_headers({{"X-Device-Id", "first"}, {"x-device-id", "second"}});
    CHECK(v.header("X-Device-Id") == "first");
    CHECK(v.header("x-device-id") == "second");
    CHECK(v.header("X-DEVICE-ID") == "first");
  }
}
