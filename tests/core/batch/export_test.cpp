#include "core/batch/csv.hpp"
#include "core/batch/export.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::batch;

namespace {

struct cell_row {
  std::string value;
  std::string written;
};

std::vector<cell_row> cell_rows() {
  return {
      {"plain", "plain"},
      {"", ""},
      {"a@acme.io", "a@acme.io"},
      {"x=1", "x=1"},
      // OWASP CSV injection: a leading formula character is defused.
      {"=1+2", "'=1+2"},
      {"+x", "'+x"},
      {"-x", "'-x"},
      {"@x", "'@x"},
      {"\tx", "'\tx"},
      {"\rx", "\"'\rx\""},
      {"=HYPERLINK(\"http://x\",\"y\")",
       "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""},
      // RFC 4180 §2.6-2.7 quoting.
      {"a,b", "\"a,b\""},
      {"a\"b", "\"a\"\"b\""},
      {"\"", "\"\"\"\""},
      {"a\nb", "\"a\nb\""},
      {"a\r\nb", "\"a\r\nb\""},
      {"=a,b", "\"'=a,b\""},
      {"a;b", "a;b"},
  };
}

} // namespace

TEST_SUITE("core.batch") {
  TEST_CASE("export cells are quoted and defused as the table says") {
    for (const auto& row : cell_rows()) {
      CAPTURE(row.value);
      std::string out = "<";
      append_cell(out, row.value);
      CHECK(out == "<" + row.written);
    }
  }

  TEST_CASE("export rows end with CRLF") {
    std::string out;
    append_row(out, {"a", "=b", "c,d"});
    append_row(out, std::vector<std::string>{"x", "", "y\"z"});
    std::vector<std::string_view> views{"1"};
    append_row(out, views);
    CHECK(out == "a,'=b,\"c,d\"\r\nx,,\"y\"\"z\"\r\n1\r\n");
  }

  TEST_CASE("export rows read back as written, formulas defused") {
    std::vector<std::string> cells;
    for (const auto& row : cell_rows())
      cells.push_back(row.value);
    std::string out;
    append_row(out, cells);
    append_row(out, cells);
    std::vector<std::vector<std::string>> back;
    csv_reader reader{[&](const csv_record& r) {
      back.emplace_back(r.fields.begin(), r.fields.end());
      return true;
    }};
    REQUIRE(reader.feed(out));
    REQUIRE(reader.finish());
    REQUIRE(back.size() == 2);
    REQUIRE(back[0].size() == cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      CAPTURE(cells[i]);
      bool defused =
          !cells[i].empty() && std::string_view{"=+-@\t\r"}.find(cells[i][0]) !=
                                   std::string_view::npos;
      CHECK(back[0][i] == (defused ? "'" + cells[i] : cells[i]));
    }
  }
}
