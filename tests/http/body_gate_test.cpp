#include "http/body_gate.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using mailassay::http::body_gate;
using mailassay::http::body_limits;

namespace {

// Feeds `input` to `g` in reads of at most `step` bytes into a buffer of
// `cap` bytes, the way gated_socket does, and returns what the HTTP parser
// would be given.
std::string through(body_gate& g, const std::string& input, std::size_t cap,
                    std::size_t step) {
  std::string out;
  std::string aside;
  std::vector<char> buf(cap);
  std::size_t p = 0;
  for (;;) {
    if (g.injection_pending()) {
      out += body_gate::refused_chunk;
      g.injected();
      continue;
    }
    std::size_t filled = aside.size();
    std::memcpy(buf.data(), aside.data(), aside.size());
    aside.clear();
    for (;;) {
      if (p == input.size())
        return out;
      auto n = std::min({step, cap - filled, input.size() - p});
      std::memcpy(buf.data() + filled, input.data() + p, n);
      p += n;
      filled += n;
      auto v = g.scan(buf.data(), filled, cap);
      if (v.deliver == 0) {
        filled = v.keep;
        continue;
      }
      if (v.keep > 0)
        aside.assign(buf.data() + filled - v.keep, v.keep);
      out.append(buf.data(), v.deliver);
      break;
    }
  }
}

std::string chunk(const std::string& data) {
  char size[20];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

const body_limits limits{100, 1000};

const std::string get = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

std::string upload(std::size_t n, const std::string& extra = "") {
  return "POST /v2/batch/upload?smtp=false HTTP/1.1\r\nHost: x\r\n"
         "content-length: " +
         std::to_string(n) + "\r\n" + extra + "\r\n" + std::string(n, 'a');
}

} // namespace

TEST_SUITE("http.body_gate") {
  TEST_CASE("requests within their limits pass unchanged, however the "
            "reads split them") {
    std::string chunked_upload =
        "POST /v2/batch/upload HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"
        "\r\n" +
        chunk(std::string(60, 'b')) + chunk(std::string(40, 'c')) +
        "0\r\nX-Trailer: 1\r\n\r\n";
    std::string other = "POST /v2/email/validate HTTP/1.1\r\nContent-Length: "
                        "900\r\n\r\n" +
                        std::string(900, 'd');
    auto input =
        "\r\n" + get + upload(100) + chunked_upload + other + get + upload(0);
    for (std::size_t step : {1, 7, 64, 333, 100000}) {
      CAPTURE(step);
      body_gate g{limits};
      CHECK(through(g, input, 256, step) == input);
      CHECK_FALSE(g.refused());
    }
  }

  TEST_CASE("an upload declaring too much gets its length renamed and the "
            "rest of the input dropped") {
    for (std::size_t step : {1, 10, 100000}) {
      CAPTURE(step);
      body_gate g{limits};
      auto input = get + upload(101, "Expect: 100-continue\r\n") + get;
      auto out = through(g, input, 512, step);
      auto head_end = input.find("\r\n\r\n", get.size()) + 4;
      auto expected = input.substr(0, head_end);
      expected.replace(expected.find("content-length"), 14, "X-Body-Refused");
      CHECK(out == expected);
      CHECK(g.refused());
    }
  }

  TEST_CASE("the upload limit applies to the upload route only") {
    body_gate g{limits};
    auto other =
        "POST /v2/batch/uploads HTTP/1.1\r\nContent-Length: 500\r\n\r\n" +
        std::string(500, 'x');
    CHECK(through(g, other, 512, 512) == other);
    auto huge = "PUT /x HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n"
                "\r\n";
    auto out = through(g, huge, 512, 512);
    CHECK(out.find("X-Body-Refused: 99999") != std::string::npos);
    CHECK(g.refused());
  }

  TEST_CASE("a chunked upload passing the limit ends with a marked zero "
            "chunk") {
    for (std::size_t step : {1, 5, 100000}) {
      CAPTURE(step);
      body_gate g{limits};
      auto head = std::string{"POST /v2/batch/upload HTTP/1.1\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n"};
      auto input = head + chunk(std::string(60, 'b')) +
                   chunk(std::string(41, 'c')) + "0\r\n\r\n" + get;
      auto out = through(g, input, 256, step);
      CHECK(out == head + chunk(std::string(60, 'b')) +
                       "0\r\nX-Body-Refused: 1\r\n\r\n");
      CHECK(g.refused());
    }
  }

  TEST_CASE("a zero chunk with no room left in the buffer comes with the "
            "next read") {
    body_gate g{limits};
    std::string head = "POST /v2/batch/upload HTTP/1.1\r\nTransfer-Encoding: "
                       "chunked\r\n\r\n";
    auto input = head + chunk(std::string(200, 'b'));
    // The buffer ends just after the chunk-size line.
    std::vector<char> buf(head.size() + 5);
    std::memcpy(buf.data(), input.data(), buf.size());
    auto v = g.scan(buf.data(), buf.size(), buf.size());
    CHECK(v.deliver == head.size());
    CHECK(g.injection_pending());
    CHECK(g.refused());
  }

  TEST_CASE("a head larger than the buffer is left to the parser") {
    body_gate g{limits};
    auto input =
        "POST /v2/batch/upload HTTP/1.1\r\nX-Long: " + std::string(300, 'x') +
        "\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'a');
    CHECK(through(g, input, 256, 256) == input);
    CHECK_FALSE(g.refused());
  }

  TEST_CASE("a chunk-size line the gate cannot read ends the body as "
            "refused, never lets the rest through") {
    // The parser takes a bare LF inside a chunk extension, or any byte after
    // the CR: the gate would lose track of the body, so it refuses.
    for (std::string odd :
         {std::string{"1;\n\r\nX\r\n"}, std::string{"5\rXhello\r\n"}}) {
      CAPTURE(odd);
      body_gate g{limits};
      auto head = std::string{"POST /v2/batch/upload HTTP/1.1\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n"};
      auto input = head + odd + chunk(std::string(500, 'z')) + "0\r\n\r\n";
      auto out = through(g, input, 256, 100000);
      CHECK(g.refused());
      CHECK(out.find(std::string(500, 'z')) == std::string::npos);
      CHECK(out.size() < input.size());
    }
  }

  TEST_CASE("a folded Content-Length or Transfer-Encoding is read as the "
            "parser reads it") {
    body_gate g{limits};
    auto folded = std::string{"POST /v2/batch/upload HTTP/1.1\r\n"
                              "Content-Length:\r\n 99999999\r\n\r\n"} +
                  std::string(200, 'a');
    auto out = through(g, folded, 512, 512);
    CHECK(g.refused());
    CHECK(out.find("X-Body-Refused:\r\n 99999999") != std::string::npos);

    body_gate h{limits};
    auto head = std::string{"POST /v2/batch/upload HTTP/1.1\r\n"
                            "Transfer-Encoding:\r\n\tchunked\r\n\r\n"};
    auto input = head + chunk(std::string(150, 'c')) + "0\r\n\r\n";
    auto chunked_out = through(h, input, 512, 512);
    CHECK(h.refused());
    CHECK(chunked_out == head + "0\r\nX-Body-Refused: 1\r\n\r\n");
  }

  TEST_CASE("the upload path with a trailing slash gets the upload limit") {
    body_gate g{limits};
    auto input = std::string{"POST /v2/batch/upload/ HTTP/1.1\r\n"
                             "Content-Length: 101\r\n\r\n"} +
                 std::string(101, 'a');
    through(g, input, 512, 512);
    CHECK(g.refused());
  }
}
