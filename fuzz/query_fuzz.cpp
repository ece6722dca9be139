// Fuzz target: query strings (http/query.hpp). Oracles: what is read has
// names, and no control character in a name or value; the 422 messages
// name each problem once; errors render as JSON.

#include "fuzz/fuzz_check.hpp"

#include "http/codec/error.hpp"
#include "http/query.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string raw{reinterpret_cast<const char*>(data), size};
  auto q = mailassay::http::query_args::parse(raw);
  if (!q) {
    auto body = mailassay::http::codec::error_body(q.error_value());
    MAILASSAY_FUZZ_CHECK(
        !nlohmann::json::parse(body, nullptr, false).is_discarded());
    return 0;
  }
  auto clean = [](const std::string& s) {
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f)
        return false;
    return true;
  };
  for (auto& [name, value] : q->items()) {
    MAILASSAY_FUZZ_CHECK(!name.empty());
    MAILASSAY_FUZZ_CHECK(clean(name) && clean(value));
    MAILASSAY_FUZZ_CHECK(q->get(name).has_value());
  }
  auto problems = q->problems("format,status,days");
  std::set<std::string> unique(problems.begin(), problems.end());
  MAILASSAY_FUZZ_CHECK(unique.size() == problems.size());
  MAILASSAY_FUZZ_CHECK(problems.size() <= q->items().size());
  return 0;
}
