// Fuzz target: the body gate and the request-head checks
// (http/body_gate.hpp, http/request_head.hpp), with http_parser as the
// oracle: whatever the gate lets through must parse without an error (a
// parser error is a silent close in RESTinio), and where the gate stands
// between requests the parser must too (else they disagree on where a body
// ends: request smuggling).
//
// Input: byte 0 picks the read size, byte 1 the read buffer's size, the
// rest is what the client sends.

#include "fuzz/fuzz_check.hpp"

#include "http/body_gate.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <http_parser.h>
#include <string>
#include <vector>

using mailassay::http::body_gate;
using mailassay::http::body_limits;
using mailassay::http::head_limits;

namespace {

struct fed {
  std::string out;
  int refused = 0;
  bool consumed = false; // every input byte was scanned
  bool kept = false;     // undecided bytes were left at the end
};

// Feeds `input` the way gated_socket does: reads of at most `step` bytes
// into a buffer of `cap`, kept bytes presented again, a buffer doubled when
// the gate asks for room.
fed through(body_gate& g, const std::string& input, std::size_t cap,
            std::size_t step) {
  fed r;
  std::string aside;
  std::size_t p = 0;
  for (;;) {
    if (g.injection_pending()) {
      r.out += body_gate::refused_chunk;
      g.injected();
      continue;
    }
    std::vector<char> buf(std::max(cap, aside.size()));
    std::size_t filled = aside.size();
    std::memcpy(buf.data(), aside.data(), aside.size());
    aside.clear();
    for (;;) {
      auto v = g.scan(buf.data(), filled, buf.size());
      MAILASSAY_FUZZ_CHECK(v.deliver <= buf.size());
      MAILASSAY_FUZZ_CHECK(v.keep <= filled);
      if (v.refuse) {
        MAILASSAY_FUZZ_CHECK(v.deliver == 0);
        r.refused = v.refuse;
        return r;
      }
      if (v.grow) {
        MAILASSAY_FUZZ_CHECK(v.deliver == 0 && v.keep == filled);
        // The head limit bounds the room a head may ask for.
        MAILASSAY_FUZZ_CHECK(buf.size() < (1u << 16));
        buf.resize(buf.size() * 2);
      } else if (v.deliver > 0) {
        MAILASSAY_FUZZ_CHECK(v.deliver + v.keep <= filled ||
                             (g.refused() && v.keep == 0));
        if (v.keep > 0)
          aside.assign(buf.data() + filled - v.keep, v.keep);
        r.out.append(buf.data(), v.deliver);
        break;
      } else {
        filled = v.keep;
      }
      if (p == input.size()) {
        r.consumed = true;
        r.kept = filled > 0;
        return r;
      }
      auto n = std::min({step, buf.size() - filled, input.size() - p});
      std::memcpy(buf.data() + filled, input.data() + p, n);
      p += n;
      filled += n;
    }
  }
}

struct counts {
  int begun = 0;
  int completed = 0;
};

int on_begin(http_parser* p) {
  static_cast<counts*>(p->data)->begun++;
  return 0;
}

int on_complete(http_parser* p) {
  static_cast<counts*>(p->data)->completed++;
  return 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size < 2)
    return 0;
  std::size_t step = data[0] >= 224 ? 100000 : 1 + data[0] % 32;
  std::size_t cap = 32 + std::size_t{data[1]} * 8;
  std::string input{reinterpret_cast<const char*>(data + 2), size - 2};
  body_gate g{body_limits{300, 600}, head_limits{512, 16}};
  auto r = through(g, input, cap, step);
  if (r.refused) {
    int s = r.refused;
    MAILASSAY_FUZZ_CHECK(s == 400 || s == 414 || s == 431 || s == 501 ||
                         s == 505);
    MAILASSAY_FUZZ_CHECK(!g.refusal().empty());
  }
  // What reached the parser parses.
  http_parser_settings settings;
  http_parser_settings_init(&settings);
  settings.on_message_begin = on_begin;
  settings.on_message_complete = on_complete;
  http_parser parser;
  http_parser_init(&parser, HTTP_REQUEST);
  counts c;
  parser.data = &c;
  auto n = http_parser_execute(&parser, &settings, r.out.data(), r.out.size());
  if (parser.upgrade)
    return 0; // the rest is the upgraded protocol's, as RESTinio treats it
  if (HTTP_PARSER_ERRNO(&parser) != HPE_OK) {
    std::fprintf(stderr, "parser error %s at %zu of %zu delivered bytes\n",
                 http_errno_name(HTTP_PARSER_ERRNO(&parser)), n, r.out.size());
    MAILASSAY_FUZZ_CHECK(!"the gate let through what the parser refuses");
  }
  // Where the gate stands between requests, so does the parser.
  if (r.consumed && !r.refused && !g.refused() && g.idle() && !r.kept)
    MAILASSAY_FUZZ_CHECK(c.begun == c.completed);
  return 0;
}
