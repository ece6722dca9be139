#include "core/webhooks/http_message.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core;
using namespace mailassay::core::webhooks;

TEST_SUITE("core.webhooks.http_message") {
  TEST_CASE("writes a request head with Host, the fields and the length") {
    auto url = parse_target_url("https://hooks.example.com:8443/in?x=1");
    REQUIRE(url);
    std::vector<header_field> fields{{"Content-Type", "application/json"},
                                     {"Mailassay-Event", "ping"}};
    auto head = request_head("POST", *url, fields, 17);
    REQUIRE(head);
    CHECK(*head == "POST /in?x=1 HTTP/1.1\r\n"
                   "Host: hooks.example.com:8443\r\n"
                   "Content-Type: application/json\r\n"
                   "Mailassay-Event: ping\r\n"
                   "Content-Length: 17\r\n"
                   "Connection: close\r\n\r\n");
  }

  TEST_CASE("refuses header injection") {
    auto url = parse_target_url("https://h.example/");
    REQUIRE(url);
    for (auto f :
         {header_field{"X-A", "v\r\nEvil: 1"},
          header_field{"X-A", std::string("v\0w", 3)}, header_field{"X A", "v"},
          header_field{"", "v"}, header_field{"X-A:", "v"}}) {
      std::vector<header_field> fields{f};
      auto head = request_head("POST", *url, fields, 0);
      REQUIRE_FALSE(head);
      CHECK(head.error_value().code == errc::bad_request);
    }
    CHECK_FALSE(request_head("PO ST", *url, {}, 0));
  }

  TEST_CASE("reads the status of a complete head") {
    struct row {
      std::string bytes;
      head_state state;
      int code;
    };
    const row rows[] = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", head_state::complete,
         200},
        {"HTTP/1.0 204 No Content\r\n\r\nbody", head_state::complete, 204},
        {"HTTP/1.1 500\r\n\r\n", head_state::complete, 500},
        {"HTTP/1.1 404 Not Found\n\n", head_state::complete, 404},
        // Interim answers are skipped.
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\n\r\n",
         head_state::complete, 202},
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 20", head_state::incomplete, 0},
        {"HTTP/1.1 200 OK\r\nX: y\r\n", head_state::incomplete, 0},
        {"HTT", head_state::incomplete, 0},
        {"", head_state::incomplete, 0},
        {"SSH-2.0-OpenSSH\r\n\r\n", head_state::malformed, 0},
        {"HTTP/2 200\r\n\r\n", head_state::malformed, 0},
        {"HTTP/1.1 2x0 OK\r\n\r\n", head_state::malformed, 0},
        {"HTTP/1.1 099 Low\r\n\r\n", head_state::malformed, 0},
        {"HTTP/1.1 2000 OK\r\n\r\n", head_state::malformed, 0},
    };
    for (const auto& r : rows) {
      auto h = read_response_head(r.bytes, 1024);
      CHECK_MESSAGE(h.state == r.state, r.bytes);
      CHECK_MESSAGE(h.status_code == r.code, r.bytes);
    }
  }

  TEST_CASE("a head larger than the limit is refused") {
    std::string big = "HTTP/1.1 200 OK\r\nX: " + std::string(2000, 'a');
    CHECK(read_response_head(big, 1024).state == head_state::too_large);
    CHECK(read_response_head(big + "\r\n\r\n", 1024).state ==
          head_state::too_large);
    CHECK(read_response_head(big + "\r\n\r\n", 4096).state ==
          head_state::complete);
  }
}
