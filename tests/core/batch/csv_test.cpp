#include "core/batch/csv.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace mailassay::core::batch;
using namespace std::string_literals;
using namespace std::string_view_literals;

namespace {

using records = std::vector<std::vector<std::string>>;

// What a reader made of an input: the records, their lines, or the error.
struct outcome {
  records rows;
  std::vector<std::size_t> lines;
  std::string error;
  char delimiter = 0;

  bool operator==(const outcome&) const = default;
};

// Reads `input` in chunks of `chunk` bytes (0: all at once).
outcome read(std::string_view input, std::size_t chunk = 0,
             csv_options opts = {}) {
  outcome out;
  csv_reader reader{[&](const csv_record& r) {
                      out.rows.emplace_back(r.fields.begin(), r.fields.end());
                      out.lines.push_back(r.line);
                      return true;
                    },
                    opts};
  auto step = chunk == 0 ? std::max<std::size_t>(input.size(), 1) : chunk;
  for (std::size_t i = 0; i < input.size(); i += step)
    if (auto fed = reader.feed(input.substr(i, step)); !fed) {
      out.error = fed.error_value().message;
      out.delimiter = reader.delimiter();
      return out;
    }
  if (auto done = reader.finish(); !done)
    out.error = done.error_value().message;
  out.delimiter = reader.delimiter();
  return out;
}

// The chunk sizes every table row is read with; all must agree.
constexpr std::size_t chunkings[] = {1, 2, 3, 5, 7, 64};

struct record_row {
  std::string input;
  records expected;
};

std::vector<record_row> record_rows() {
  return {
      // RFC 4180 §2 basics and line ends.
      {"a,b\nc,d\n", {{"a", "b"}, {"c", "d"}}},
      {"a,b\nc,d", {{"a", "b"}, {"c", "d"}}},
      {"a,b\r\nc,d\r\n", {{"a", "b"}, {"c", "d"}}},
      {"a,b\rc,d\r", {{"a", "b"}, {"c", "d"}}},
      {"a\r\nb\nc\rd", {{"a"}, {"b"}, {"c"}, {"d"}}},
      {"single", {{"single"}}},
      // Quotes (§2.5-2.7).
      {"\"a,b\",c", {{"a,b", "c"}}},
      {"\"a\"\"b\",c", {{"a\"b", "c"}}},
      {"\"\"\"\"", {{"\""}}},
      {"\"a\nb\",c\nd,e", {{"a\nb", "c"}, {"d", "e"}}},
      {"\"a\r\nb\"\r\nc", {{"a\r\nb"}, {"c"}}},
      {"\"a\rb\"", {{"a\rb"}}},
      {"\"\",x", {{"", "x"}}},
      {"\"a\"", {{"a"}}},
      {"\"a\"\r\n", {{"a"}}},
      {"x,\"\"", {{"x", ""}}},
      // Empty fields and trailing delimiters.
      {",,", {{"", "", ""}}},
      {"a,\n", {{"a", ""}}},
      {"a,", {{"a", ""}}},
      // A quote inside an unquoted field is kept as written.
      {"ab\"c,d", {{"ab\"c", "d"}}},
      {"a \"b\" c", {{"a \"b\" c"}}},
      {" \"a\",b", {{" \"a\"", "b"}}},
      // The UTF-8 BOM is skipped at the start only.
      {"\xEF\xBB\xBF"
       "email\na@b.c",
       {{"email"}, {"a@b.c"}}},
      {"a,\xEF\xBB\xBF", {{"a", "\xEF\xBB\xBF"}}},
      {"\xEF\xBB\xBF", {}},
      // Blank lines are skipped, lines of empty cells are records.
      {"\n\na\n\r\n\rb\n\n", {{"a"}, {"b"}}},
      {"", {}},
      {"\r\n\r\n", {}},
      {"a\n,\n", {{"a"}, {"", ""}}},
      // Delimiter detection from the first non-blank line.
      {"a;b\nc;d", {{"a", "b"}, {"c", "d"}}},
      {"a\tb\nc\td", {{"a", "b"}, {"c", "d"}}},
      {"abc\nd,e", {{"abc"}, {"d", "e"}}},
      {"abc\nd;e", {{"abc"}, {"d;e"}}},
      {"a,b;c", {{"a", "b;c"}}},
      {"a;b;c,d", {{"a", "b", "c,d"}}},
      {"a\tb\tc;d", {{"a", "b", "c;d"}}},
      {"a\tb\tc;d;e", {{"a\tb\tc", "d", "e"}}},
      {"\"a;b;c\",d", {{"a;b;c", "d"}}},
      {"\n\r\na;b\n", {{"a", "b"}}},
      {"\"x\ny;z;w\",v\na,b", {{"x\ny;z;w", "v"}, {"a", "b"}}},
      {"Jos\xC3\xA9;na\xC3\xAFve@ex\xC3\xA4mple.de",
       {{"Jos\xC3\xA9", "na\xC3\xAFve@ex\xC3\xA4mple.de"}}},
      // The longest field and the most fields allowed.
      {std::string(4096, 'x'), {{std::string(4096, 'x')}}},
      {"\"" + std::string(4096, 'x') + "\"", {{std::string(4096, 'x')}}},
      {std::string(999, ','), {std::vector<std::string>(1000)}},
  };
}

struct error_row {
  std::string input;
  std::string message;
};

std::vector<error_row> error_rows() {
  const std::string unterminated =
      "unterminated quoted field (the end of the file was reached before its "
      "closing quote)";
  const std::string doubled =
      " after the closing quote of field 1 (a quote inside a quoted field "
      "must be doubled)";
  return {
      {"a,\"bc", "line 1: " + unterminated},
      {"x\ny,\"b\nc\nd", "line 2: " + unterminated},
      {"x\r\n\r\n\"a\"\"", "line 3: " + unterminated},
      {"\"", "line 1: " + unterminated},
      {"\"a\"b,c", "line 1: unexpected character 'b'" + doubled},
      {"\"a\" ,c", "line 1: unexpected character ' '" + doubled},
      {"\"a\"\tb,c,d", "line 1: unexpected tab character" + doubled},
      {"\"a\"\xC3\xA9", "line 1: unexpected byte 0xC3" + doubled},
      {"a\r\nb\r\n\"c\"d", "line 3: unexpected character 'd'" + doubled},
      {"\"a\r\nb\"\r\n\"c\"d", "line 3: unexpected character 'd'" + doubled},
      {"x,\"a\"b",
       "line 1: unexpected character 'b' after the closing quote of field 2 "
       "(a quote inside a quoted field must be doubled)"},
      // Binary input: NUL or not UTF-8 (RFC 3629), 1-based byte offsets.
      {"a,b\n\0"s, "the file is not text (binary data at byte 5)"},
      {"\0"s, "the file is not text (binary data at byte 1)"},
      {"ab\xFF", "the file is not text (binary data at byte 3)"},
      {"\xC0\xAF", "the file is not text (binary data at byte 1)"},
      {"x\xED\xA0\x80", "the file is not text (binary data at byte 2)"},
      {"ab\xE2\x82", "the file is not text (binary data at byte 3)"},
      {"a\xE2\x28\xA1", "the file is not text (binary data at byte 2)"},
      {"\xF4\x90\x80\x80", "the file is not text (binary data at byte 1)"},
      {"\xE0\x80\x80", "the file is not text (binary data at byte 1)"},
      {"\xF0\x80\x80\x80", "the file is not text (binary data at byte 1)"},
      {"\x80", "the file is not text (binary data at byte 1)"},
      {"\"abc\xF8\"", "the file is not text (binary data at byte 5)"},
      {"\xEF\xBB", "the file is not text (binary data at byte 1)"},
      {"abcdefghijklmnop\0q"s, "the file is not text (binary data at byte 17)"},
      // The earlier of a CSV error and binary data is reported.
      {"\"a\"b\0"s, "line 1: unexpected character 'b'" + doubled},
      {"\0\"a\"b"s, "the file is not text (binary data at byte 1)"},
      {"\"a\0"s, "the file is not text (binary data at byte 3)"},
      // Limits.
      {std::string(4097, 'x'), "line 1: field 1 is longer than 4096 bytes"},
      {"a\nb," + std::string(4097, 'x'),
       "line 2: field 2 is longer than 4096 bytes"},
      {"a\n\"" + std::string(5000, 'x'),
       "line 2: field 1 is longer than 4096 bytes (it is quoted from line 2 "
       "on: is its closing quote missing?)"},
      {std::string(1000, ','), "line 1: the record has more than 1000 fields"},
  };
}

// A deterministic CSV with every feature mixed: quotes, doubled quotes,
// embedded delimiters and line ends, all three line ends, blank lines.
std::string generated_csv(std::size_t rows) {
  std::uint64_t state = 42;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const char* pieces[] = {"a",  "b@c.d", "\"q\"",    ",",    "\r\n", "\n",
                          "\r", " ",     "\xC3\xA9", "x\"y", ";"};
  const char* ends[] = {"\r\n", "\n", "\r", "\n\n", "\r\n\r\n"};
  std::string out;
  for (std::size_t r = 0; r < rows; ++r) {
    auto fields = 1 + next() % 5;
    for (std::size_t f = 0; f < fields; ++f) {
      if (f > 0)
        out += ',';
      std::string cell;
      for (auto n = next() % 4; n > 0; --n)
        cell += pieces[next() % std::size(pieces)];
      bool must_quote = cell.find_first_of(",\"\r\n") != cell.npos;
      if (must_quote || next() % 3 == 0) {
        out += '"';
        for (char c : cell)
          out += c == '"' ? std::string{"\"\""} : std::string{c};
        out += '"';
      } else {
        out += cell.empty() && fields == 1 ? std::string{"z"} : cell;
      }
    }
    out += ends[next() % std::size(ends)];
  }
  return out;
}

} // namespace

TEST_SUITE("core.batch") {
  TEST_CASE("csv records come out as the table says, in any chunking") {
    for (const auto& row : record_rows()) {
      CAPTURE(row.input);
      auto whole = read(row.input);
      CHECK(whole.error == "");
      CHECK(whole.rows == row.expected);
      for (auto chunk : chunkings) {
        CAPTURE(chunk);
        CHECK(read(row.input, chunk) == whole);
      }
    }
  }

  TEST_CASE("csv errors name the line or byte, in any chunking") {
    for (const auto& row : error_rows()) {
      CAPTURE(row.input);
      auto whole = read(row.input);
      CHECK(whole.error == row.message);
      for (auto chunk : chunkings) {
        CAPTURE(chunk);
        CHECK(read(row.input, chunk).error == row.message);
      }
    }
  }

  TEST_CASE("csv records carry the line they start on") {
    struct line_row {
      std::string input;
      std::vector<std::size_t> lines;
    };
    std::vector<line_row> rows{
        {"a\nb\nc", {1, 2, 3}},         {"a\n\n\"x\ny\"\nb", {1, 3, 5}},
        {"a\r\n\r\nb\r\rc", {1, 3, 5}}, {"\"x\r\ny\r\nz\"\r\nb", {1, 4}},
        {"\"x\r\ry\"\nb", {1, 4}},
    };
    for (const auto& row : rows) {
      CAPTURE(row.input);
      CHECK(read(row.input).lines == row.lines);
      for (auto chunk : chunkings)
        CHECK(read(row.input, chunk).lines == row.lines);
    }
  }

  TEST_CASE("csv delimiter is sniffed from the first line or given") {
    struct sniff_row {
      std::string_view line;
      char delimiter;
    };
    const sniff_row rows[] = {
        {"", ','},
        {"a", ','},
        {"a,b", ','},
        {"a;b", ';'},
        {"a\tb", '\t'},
        {"a,b;c", ','},
        {"a;b\tc", ';'},
        {"a\tb\tc;d;e", ';'},
        {"a\tb\tc;d", '\t'},
        {"\"a;b;c\",d", ','},
        {"a;b;c;d,e", ';'},
        {"a;b;c,d,e", ','},
        {"\"x\"\";\"\";\",y", ','},
    };
    for (const auto& row : rows) {
      CAPTURE(row.line);
      CHECK(sniff_delimiter(row.line) == row.delimiter);
    }
    CHECK(read("a;b\nc;d").delimiter == ';');
    CHECK(read("a;b,c", 0, csv_options{';'}).rows == records{{"a", "b,c"}});
    CHECK(read("a,b;c", 1, csv_options{';'}).rows == records{{"a,b", "c"}});
    CHECK(read("a;b\nc", 0, csv_options{'"'}).rows ==
          records{{"a", "b"}, {"c"}});
    CHECK(read("\xEF\xBB\xBFx\ty", 1, csv_options{'\t'}).rows ==
          records{{"x", "y"}});
  }

  TEST_CASE("csv sniffing decides after 64 KiB without a line end") {
    // One long quoted field with semicolons: the first line never ends
    // inside the window, so the window's counts decide.
    std::string field(70000, ';');
    std::string input = "a,\"" + field + "\"\n";
    auto whole = read(input);
    CHECK(whole.error == "line 1: field 2 is longer than 4096 bytes (it is "
                         "quoted from line 1 on: is its closing quote "
                         "missing?)");
    CHECK(read(input, 1) == whole);
    CHECK(read(input, 4096) == whole);
    // 20 fields of 4000 bytes: the first line ends past the window.
    std::string wide;
    for (int i = 0; i < 20; ++i)
      wide += (i > 0 ? ";" : "") + std::string(4000, 'x');
    wide += "\nx,y";
    auto split = read(wide);
    CHECK(split.error == "");
    CHECK(split.delimiter == ';');
    CHECK(split.rows.size() == 2);
    CHECK(split.rows[0].size() == 20);
    CHECK(read(wide, 1) == split);
    CHECK(read(wide, 1000) == split);
  }

  TEST_CASE("csv feeding one byte at a time equals feeding all at once") {
    auto input = generated_csv(3000);
    auto whole = read(input);
    REQUIRE(whole.error == "");
    CHECK(whole.rows.size() > 2000);
    CHECK(read(input, 1) == whole);
    CHECK(read(input, 4093) == whole);
  }

  TEST_CASE("csv random inputs read alike in every chunking") {
    // Short strings over the bytes that matter, errors included.
    const std::string_view alphabet[] = {
        "a",  ",",    ";",    "\t",       "\"",   "\"\"",         "\r",
        "\n", "\r\n", "\0"sv, "\xC3\xA9", "\xC3", "\xEF\xBB\xBF", " "};
    std::uint64_t state = 7;
    auto next = [&] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    for (int n = 0; n < 3000; ++n) {
      std::string input;
      for (auto k = next() % 16; k > 0; --k)
        input += alphabet[next() % std::size(alphabet)];
      CAPTURE(input);
      auto whole = read(input);
      REQUIRE(read(input, 1) == whole);
      REQUIRE(read(input, 3) == whole);
    }
  }

  TEST_CASE("csv reading stops when the sink says so") {
    std::vector<std::string> seen;
    csv_reader reader{[&](const csv_record& r) {
      seen.emplace_back(r.fields[0]);
      return seen.size() < 2;
    }};
    CHECK(reader.feed("a\nb\nc\n\"unterminated"));
    CHECK(reader.stopped());
    CHECK(reader.feed("\0"s));
    CHECK(reader.finish());
    CHECK(seen == std::vector<std::string>{"a", "b"});
  }

  TEST_CASE("csv errors stick once found") {
    csv_reader reader{[](const csv_record&) { return true; }};
    auto first = reader.feed("\"a\"b\n");
    REQUIRE_FALSE(first);
    CHECK(first.error_value().code == mailassay::core::errc::bad_request);
    auto again = reader.feed("c,d\n");
    REQUIRE_FALSE(again);
    CHECK(again.error_value().message == first.error_value().message);
    CHECK_FALSE(reader.finish());
  }
}
