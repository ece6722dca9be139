// Fuzz target: the SMTP reply parser (core/smtp/reply.hpp). Oracles: the
// replies and the error are the same whatever the pieces the bytes come in;
// every reply respects the parser's limits and has a code 200-599; the
// enhanced code parser and text() take any line.
//
// Input: byte 0 seeds the cuts, the rest is what the server sends.

#include "fuzz/fuzz_check.hpp"

#include "core/smtp/reply.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace mailassay::core::smtp;

namespace {

struct outcome {
  std::vector<reply> replies;
  parse_error error = parse_error::none;
};

bool same(const reply& a, const reply& b) {
  return a.code == b.code && a.lines == b.lines && a.enhanced == b.enhanced &&
         a.long_lines == b.long_lines;
}

outcome parse(std::string_view bytes, const std::vector<std::size_t>& cuts,
              const reply_limits& limits) {
  outcome o;
  reply_parser p{limits};
  std::size_t at = 0;
  auto feed = [&](std::string_view piece) {
    auto r = p.feed(piece);
    for (auto& rep : r.replies)
      o.replies.push_back(std::move(rep));
    if (r.error != parse_error::none)
      o.error = r.error;
  };
  for (auto cut : cuts) {
    if (cut <= at || cut > bytes.size())
      continue;
    feed(bytes.substr(at, cut - at));
    at = cut;
  }
  feed(bytes.substr(at));
  MAILASSAY_FUZZ_CHECK(p.error() == o.error);
  return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size < 1)
    return 0;
  std::string_view bytes{reinterpret_cast<const char*>(data + 1), size - 1};
  // Small limits, so that the fuzzer reaches them.
  reply_limits limits{64, 512, 8};
  auto whole = parse(bytes, {}, limits);
  for (auto& r : whole.replies) {
    MAILASSAY_FUZZ_CHECK(r.code >= 200 && r.code <= 599);
    MAILASSAY_FUZZ_CHECK(r.lines.size() <= limits.max_lines);
    std::size_t total = 0;
    for (auto& l : r.lines) {
      MAILASSAY_FUZZ_CHECK(l.size() <= limits.max_line);
      total += l.size();
      parse_enhanced_code(l);
    }
    MAILASSAY_FUZZ_CHECK(total <= limits.max_reply);
    if (r.enhanced)
      MAILASSAY_FUZZ_CHECK(r.enhanced->klass == r.klass());
    (void)r.text();
  }
  std::vector<std::size_t> cuts;
  std::uint32_t x = data[0] * 2654435761u + 1;
  for (std::size_t at = 0; at < bytes.size();) {
    x = x * 1103515245u + 12345u;
    at += 1 + (x >> 16) % 8;
    cuts.push_back(at);
  }
  auto pieces = parse(bytes, cuts, limits);
  MAILASSAY_FUZZ_CHECK(pieces.error == whole.error);
  MAILASSAY_FUZZ_CHECK(pieces.replies.size() == whole.replies.size());
  for (std::size_t i = 0; i < whole.replies.size(); ++i)
    MAILASSAY_FUZZ_CHECK(same(pieces.replies[i], whole.replies[i]));
  // The default limits too.
  parse(bytes, cuts, reply_limits{});
  return 0;
}
