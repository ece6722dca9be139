// Fuzz target: the intake of a batch upload (core/batch/intake.hpp): the
// CSV reader, header and column detection, the syntax check of every cell
// (core/syntax/address.hpp) and de-duplication. Oracles: the items, the
// counts and the error are the same whatever the chunks the file comes in;
// the counts add up (every data row is an address, a duplicate or
// invalid); items are numbered 0..n-1; the address limit holds.
//
// Input: byte 0 picks the options, byte 1 seeds the cuts, the rest is the
// file.

#include "fuzz/fuzz_check.hpp"

#include "core/batch/intake.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace mailassay::core::batch;

namespace {

struct outcome {
  std::optional<intake_result> result;
  std::string error;
};

outcome read(std::string_view file, const intake_options& opts,
             const std::vector<std::size_t>& cuts) {
  outcome o;
  intake in{opts};
  std::size_t at = 0;
  for (auto cut : cuts) {
    if (cut <= at || cut > file.size())
      continue;
    (void)in.feed(file.substr(at, cut - at));
    at = cut;
  }
  (void)in.feed(file.substr(at));
  auto r = in.finish();
  if (r)
    o.result = std::move(*r);
  else
    o.error = r.error_value().message;
  return o;
}

bool same(const intake_result& a, const intake_result& b) {
  if (a.items.size() != b.items.size())
    return false;
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    auto& x = a.items[i];
    auto& y = b.items[i];
    if (x.seq != y.seq || x.email != y.email || x.done != y.done ||
        x.status != y.status || x.reason != y.reason || x.score != y.score ||
        x.detail != y.detail)
      return false;
  }
  return a.total_rows == b.total_rows && a.unique_emails == b.unique_emails &&
         a.duplicates_removed == b.duplicates_removed &&
         a.invalid_rows == b.invalid_rows && a.email_column == b.email_column &&
         a.column == b.column && a.has_header == b.has_header &&
         a.delimiter == b.delimiter;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size < 2)
    return 0;
  static constexpr char delimiters[] = {0, ',', ';', '\t'};
  intake_options opts;
  opts.delimiter = delimiters[data[0] & 3];
  opts.deduplicate = (data[0] & 4) == 0;
  if (data[0] & 8)
    opts.email_column = "email";
  // A small limit, so that the fuzzer reaches it.
  opts.max_addresses = data[0] & 16 ? 8 : 1000;
  opts.syntax.allow_test_domains = (data[0] & 32) != 0;
  std::string_view file{reinterpret_cast<const char*>(data + 2), size - 2};

  auto whole = read(file, opts, {});
  if (whole.result) {
    auto& r = *whole.result;
    MAILASSAY_FUZZ_CHECK(r.total_rows == r.unique_emails +
                                             r.duplicates_removed +
                                             r.invalid_rows);
    MAILASSAY_FUZZ_CHECK(static_cast<std::int64_t>(r.items.size()) ==
                         r.unique_emails + r.invalid_rows);
    MAILASSAY_FUZZ_CHECK(r.unique_emails <=
                         static_cast<std::int64_t>(opts.max_addresses));
    if (!opts.deduplicate)
      MAILASSAY_FUZZ_CHECK(r.duplicates_removed == 0);
    for (std::size_t i = 0; i < r.items.size(); ++i) {
      MAILASSAY_FUZZ_CHECK(r.items[i].seq == static_cast<std::int64_t>(i));
      if (r.items[i].done)
        MAILASSAY_FUZZ_CHECK(r.items[i].status ==
                             mailassay::core::validation::status::invalid);
    }
  } else {
    MAILASSAY_FUZZ_CHECK(!whole.error.empty());
  }
  // The whole file in one feed, as read_csv does it.
  auto at_once = read_csv(file, opts);
  MAILASSAY_FUZZ_CHECK(at_once.has_value() == whole.result.has_value());
  if (at_once)
    MAILASSAY_FUZZ_CHECK(same(*at_once, *whole.result));
  else
    MAILASSAY_FUZZ_CHECK(at_once.error_value().message == whole.error);
  // Pieces of 1-16 bytes, as the seed says.
  std::vector<std::size_t> cuts;
  std::uint32_t x = data[1] * 2654435761u + 1;
  for (std::size_t at = 0; at < file.size();) {
    x = x * 1103515245u + 12345u;
    at += 1 + (x >> 16) % 16;
    cuts.push_back(at);
  }
  auto pieces = read(file, opts, cuts);
  MAILASSAY_FUZZ_CHECK(pieces.result.has_value() == whole.result.has_value());
  MAILASSAY_FUZZ_CHECK(pieces.error == whole.error);
  if (pieces.result)
    MAILASSAY_FUZZ_CHECK(same(*pieces.result, *whole.result));
  return 0;
}
