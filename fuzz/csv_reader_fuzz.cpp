// Fuzz target: the streaming CSV reader (core/batch/csv.hpp). Oracles: the
// records and the error are the same whatever the chunks the file comes in
// (the whole file at once against pieces cut where the input says); the
// record limits hold; a sink that stops ends the reading.
//
// Input: byte 0 picks the delimiter option, byte 1 seeds the cuts, the
// rest is the file.

#include "fuzz/fuzz_check.hpp"

#include "core/batch/csv.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using mailassay::core::batch::csv_max_field_bytes;
using mailassay::core::batch::csv_max_fields;
using mailassay::core::batch::csv_options;
using mailassay::core::batch::csv_reader;
using mailassay::core::batch::csv_record;

namespace {

struct outcome {
  std::vector<std::vector<std::string>> records;
  std::vector<std::size_t> lines;
  bool ok = true;
  std::string error;
  char delimiter = 0;
};

outcome read(std::string_view file, csv_options opts,
             const std::vector<std::size_t>& cuts, std::size_t stop_after) {
  outcome o;
  csv_reader reader{[&](const csv_record& r) {
                      MAILASSAY_FUZZ_CHECK(r.fields.size() <= csv_max_fields);
                      std::vector<std::string> fields;
                      for (auto f : r.fields) {
                        MAILASSAY_FUZZ_CHECK(f.size() <= csv_max_field_bytes);
                        fields.emplace_back(f);
                      }
                      o.records.push_back(std::move(fields));
                      o.lines.push_back(r.line);
                      return o.records.size() < stop_after;
                    },
                    opts};
  std::size_t at = 0;
  auto feed = [&](std::string_view piece) {
    auto r = reader.feed(piece);
    if (!r && o.ok) {
      o.ok = false;
      o.error = r.error_value().message;
    }
  };
  for (auto cut : cuts) {
    if (cut <= at || cut > file.size())
      continue;
    feed(file.substr(at, cut - at));
    at = cut;
  }
  feed(file.substr(at));
  auto r = reader.finish();
  if (!r && o.ok) {
    o.ok = false;
    o.error = r.error_value().message;
  }
  o.delimiter = reader.delimiter();
  return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size < 2)
    return 0;
  static constexpr char delimiters[] = {0, ',', ';', '\t', '|'};
  csv_options opts;
  opts.delimiter = delimiters[data[0] % 5];
  std::string_view file{reinterpret_cast<const char*>(data + 2), size - 2};
  auto whole = read(file, opts, {}, SIZE_MAX);
  // Cuts every 1-16 bytes, as the seed says; and byte by byte.
  std::vector<std::size_t> cuts;
  std::uint32_t x = data[1] * 2654435761u + 1;
  for (std::size_t at = 0; at < file.size();) {
    x = x * 1103515245u + 12345u;
    at += 1 + (x >> 16) % 16;
    cuts.push_back(at);
  }
  std::vector<std::size_t> bytes;
  for (std::size_t at = 1; at < file.size() && at < 4096; ++at)
    bytes.push_back(at);
  for (auto* c : {&cuts, &bytes}) {
    auto pieces = read(file, opts, *c, SIZE_MAX);
    MAILASSAY_FUZZ_CHECK(pieces.ok == whole.ok);
    MAILASSAY_FUZZ_CHECK(pieces.error == whole.error);
    MAILASSAY_FUZZ_CHECK(pieces.records == whole.records);
    MAILASSAY_FUZZ_CHECK(pieces.lines == whole.lines);
    MAILASSAY_FUZZ_CHECK(pieces.delimiter == whole.delimiter);
  }
  // A sink that stops early sees a prefix of the records.
  auto stopped = read(file, opts, cuts, 2);
  MAILASSAY_FUZZ_CHECK(stopped.records.size() <= 2);
  for (std::size_t i = 0; i < stopped.records.size() && whole.ok; ++i)
    MAILASSAY_FUZZ_CHECK(stopped.records[i] == whole.records[i]);
  return 0;
}
