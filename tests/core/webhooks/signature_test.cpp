#include "core/webhooks/signature.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::webhooks;

TEST_SUITE("core.webhooks.signature") {
  TEST_CASE("signs the time and the raw body together") {
    CHECK(signed_content(1718000000, R"({"a":1})") == R"(1718000000.{"a":1})");
    CHECK(signed_content(0, "") == "0.");
  }

  TEST_CASE("writes one v1 per secret and reads them back") {
    std::vector<std::string> sigs{"ab12", "cd34"};
    auto h = signature_header(1718000000, sigs);
    CHECK(h == "t=1718000000,v1=ab12,v1=cd34");
    auto p = parse_signature_header(h);
    REQUIRE(p);
    CHECK(p->t == 1718000000);
    CHECK(p->v1 == sigs);
  }

  TEST_CASE("reading skips unknown schemes and refuses what has no t or v1") {
    auto p = parse_signature_header("t=5, v0=zz,v1=aa,x");
    REQUIRE(p);
    CHECK(p->t == 5);
    CHECK(p->v1 == std::vector<std::string>{"aa"});
    CHECK_FALSE(parse_signature_header("v1=aa"));
    CHECK_FALSE(parse_signature_header("t=5"));
    CHECK_FALSE(parse_signature_header("t=x5,v1=aa"));
    CHECK_FALSE(parse_signature_header(""));
  }
}
