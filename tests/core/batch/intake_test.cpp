#include "core/batch/intake.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core;
using namespace mailassay::core::batch;
using namespace std::string_literals;

namespace {

// Items in a compact form: the address, or "!" + the cell of an invalid
// row.
std::vector<std::string> compact(const std::vector<item>& items) {
  std::vector<std::string> out;
  for (const auto& it : items)
    out.push_back(it.done ? "!" + it.email : it.email);
  return out;
}

struct intake_row {
  std::string input;
  std::string email_column = "";
  bool deduplicate = true;
  // Expected:
  bool has_header;
  std::string column_name;
  std::size_t column;
  std::vector<std::string> items;
  std::int64_t total, unique, duplicates, invalid;
};

// A table, one case a row (clang-format writes a field a line): its
// entries look alike by design.
std::vector<intake_row> intake_rows() {
  return {
      // No header: the first column holding '@' in the first row.
      {"a@acme.io\nb@acme.io\n",
       "",
       true,
       false,
       "",
       0,
       {"a@acme.io", "b@acme.io"},
       2,
       2,
       0,
       0},
      {"Jo,jo@acme.io\nAl,al@acme.io",
       "",
       true,
       false,
       "",
       1,
       {"jo@acme.io", "al@acme.io"},
       2,
       2,
       0,
       0},
      {"Jo,jo@acme.io,x@acme.io\nAl,,al@acme.io",
       "",
       true,
       false,
       "",
       1,
       {"jo@acme.io", "!"},
       2,
       1,
       0,
       1},
      {"email@,x\na@acme.io",
       "",
       true,
       false,
       "",
       0,
       {"!email@", "a@acme.io"},
       2,
       1,
       0,
       1},
      // A header: no cell holds '@'.
      {"email\na@acme.io\n",
       "",
       true,
       true,
       "email",
       0,
       {"a@acme.io"},
       1,
       1,
       0,
       0},
      {"name,E-Mail,phone\nJo,jo@acme.io,1\n",
       "",
       true,
       true,
       "E-Mail",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"name,Email Address\nJo,jo@acme.io",
       "",
       true,
       true,
       "Email Address",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"name, EMAIL \nJo,jo@acme.io",
       "",
       true,
       true,
       "EMAIL",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"name,EmailAddress\nJo,jo@acme.io",
       "",
       true,
       true,
       "EmailAddress",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"name,mail\nJo,jo@acme.io",
       "",
       true,
       true,
       "mail",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"mail,email\nx,jo@acme.io",
       "",
       true,
       true,
       "email",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"contact,name\nx@acme.io,Jo",
       "",
       true,
       true,
       "contact",
       0,
       {"x@acme.io"},
       1,
       1,
       0,
       0},
      // The column asked for, by name, ignoring case and spaces.
      {"a,b\n1,x@acme.io",
       " B ",
       true,
       true,
       "b",
       1,
       {"x@acme.io"},
       1,
       1,
       0,
       0},
      {"email,work\nx@acme.io,y@acme.io",
       "WORK",
       true,
       true,
       "work",
       1,
       {"y@acme.io"},
       1,
       1,
       0,
       0},
      // Delimiters, BOM, CRLF.
      {"\xEF\xBB\xBFName;Email\r\nJo;jo@acme.io\r\n",
       "",
       true,
       true,
       "Email",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      {"id\temail\n1\tjo@acme.io\n",
       "",
       true,
       true,
       "email",
       1,
       {"jo@acme.io"},
       1,
       1,
       0,
       0},
      // De-duplication: local part exact, domain ignoring case.
      {"a@Acme.IO\nA@acme.io\na@acme.io\nb@acme.io",
       "",
       true,
       false,
       "",
       0,
       {"a@Acme.IO", "A@acme.io", "b@acme.io"},
       4,
       3,
       1,
       0},
      {"a@Acme.IO\nA@acme.io\na@acme.io\nb@acme.io",
       "",
       false,
       false,
       "",
       0,
       {"a@Acme.IO", "A@acme.io", "a@acme.io", "b@acme.io"},
       4,
       4,
       0,
       0},
      {"a@b\xC3\xBC"
       "cher.de\na@xn--bcher-kva.de\na@B\xC3\x9C"
       "CHER.de",
       "",
       true,
       false,
       "",
       0,
       {"a@b\xC3\xBC"
        "cher.de"},
       3,
       1,
       2,
       0},
      // Invalid rows stay, in place, never de-duplicated.
      {"email,name\na@acme.io,A\nbad,B\n,C\nbad,D\na@acme.io,E\n\tc@acme.io "
       ",F",
       "",
       true,
       true,
       "email",
       0,
       {"a@acme.io", "!bad", "!", "!bad", "c@acme.io"},
       6,
       2,
       1,
       3},
      {"a,email\n1\n2,x@acme.io",
       "",
       true,
       true,
       "email",
       1,
       {"!", "x@acme.io"},
       2,
       1,
       0,
       1},
      // Special-use domains are refused by default syntax options.
      {"x@foo.test\ny@acme.io",
       "",
       true,
       false,
       "",
       0,
       {"!x@foo.test", "y@acme.io"},
       2,
       1,
       0,
       1},
      // Blank lines and rows of empty cells are not rows.
      {"email,n\n\na@acme.io,1\n,,\n , \n\r\n",
       "",
       true,
       true,
       "email",
       0,
       {"a@acme.io"},
       1,
       1,
       0,
       0},
      {"\n,\nemail\na@acme.io",
       "",
       true,
       true,
       "email",
       0,
       {"a@acme.io"},
       1,
       1,
       0,
       0},
      // Quoted cells with line ends inside.
      {"email,note\n\"a@acme.io\",\"two\nlines\"\nb@acme.io,x",
       "",
       true,
       true,
       "email",
       0,
       {"a@acme.io", "b@acme.io"},
       2,
       2,
       0,
       0},
  };
}

intake_options options_of(const intake_row& row) {
  intake_options opts;
  opts.email_column = row.email_column;
  opts.deduplicate = row.deduplicate;
  return opts;
}

struct error_row {
  std::string input;
  std::string email_column;
  errc code;
  std::string message;
};

std::vector<error_row> intake_error_rows() {
  return {
      {"", "", errc::bad_request, "the file is empty"},
      {"\xEF\xBB\xBF\r\n\r\n", "", errc::bad_request, "the file is empty"},
      {",,\n\t,\n", "", errc::bad_request, "the file is empty"},
      {"email\n", "", errc::bad_request,
       "the file has a header row but no data rows"},
      {"email,name\n\n,\n", "", errc::bad_request,
       "the file has a header row but no data rows"},
      {"a,b\n1,x@acme.io", "c", errc::bad_request,
       "no column named 'c'; the header has: a, b"},
      {"a,,b\n1,x@acme.io", "email", errc::bad_request,
       "no column named 'email'; the header has: a, \"\", b"},
      {"x@acme.io", "email", errc::bad_request,
       "the file has no header row (its first row holds an address), so "
       "there is no column named 'email'"},
      {"email\n\"a@acme.io", "", errc::bad_request,
       "line 2: unterminated quoted field (the end of the file was reached "
       "before its closing quote)"},
      {"email\na@acme.io\n\0"s, "", errc::bad_request,
       "the file is not text (binary data at byte 17)"},
      // A column without a single @ is the wrong column (issue #19); a
      // file of invalid addresses is a job (intake_invalid_rows_test.cpp).
      {"name,contact\nJo,x@acme.io\nAl,y@acme.io", "", errc::bad_request,
       "column 'name' holds nothing that looks like an email address (no "
       "cell has an @; 2 data rows read): choose the column of addresses "
       "with emailColumn"},
  };
}

std::string numbered_rows(std::size_t n) {
  std::string out = "email\n";
  for (std::size_t i = 0; i < n; ++i)
    out += "user" + std::to_string(i) + "@acme.io\n";
  return out;
}

} // namespace

TEST_SUITE("core.batch") {
  TEST_CASE("intake picks the header, the column and the items") {
    for (const auto& row : intake_rows()) {
      CAPTURE(row.input);
      auto r = read_csv(row.input, options_of(row));
      REQUIRE_MESSAGE(r, (r ? "" : r.error_value().message));
      CHECK(r->has_header == row.has_header);
      CHECK(r->email_column == row.column_name);
      CHECK(r->column == row.column);
      CHECK(compact(r->items) == row.items);
      CHECK(r->total_rows == row.total);
      CHECK(r->unique_emails == row.unique);
      CHECK(r->duplicates_removed == row.duplicates);
      CHECK(r->invalid_rows == row.invalid);
      CHECK(r->total_rows ==
            r->unique_emails + r->duplicates_removed + r->invalid_rows);
      for (std::size_t i = 0; i < r->items.size(); ++i)
        CHECK(r->items[i].seq == static_cast<std::int64_t>(i));
    }
  }

  TEST_CASE("intake reads the same whatever the chunk size") {
    for (const auto& row : intake_rows()) {
      CAPTURE(row.input);
      auto whole = read_csv(row.input, options_of(row));
      REQUIRE(whole);
      for (std::size_t chunk : {1, 2, 7}) {
        intake in{options_of(row)};
        for (std::size_t i = 0; i < row.input.size(); i += chunk)
          REQUIRE(in.feed(std::string_view{row.input}.substr(i, chunk)));
        auto r = in.finish();
        REQUIRE(r);
        CHECK(compact(r->items) == compact(whole->items));
        CHECK(r->total_rows == whole->total_rows);
        CHECK(r->email_column == whole->email_column);
      }
    }
  }

  TEST_CASE("intake refuses unusable files with a message") {
    for (const auto& row : intake_error_rows()) {
      CAPTURE(row.input);
      intake_options opts;
      opts.email_column = row.email_column;
      auto r = read_csv(row.input, opts);
      REQUIRE_FALSE(r);
      CHECK(r.error_value().code == row.code);
      CHECK(r.error_value().message == row.message);
    }
  }

  TEST_CASE("intake keeps invalid rows done, invalid, scored 0") {
    auto r = read_csv("email\nbad\nx@foo.test\n\nok@acme.io\n", {});
    REQUIRE(r);
    REQUIRE(r->items.size() == 3);
    const auto& bad = r->items[0];
    CHECK(bad.done);
    CHECK(bad.status == mailassay::core::validation::status::invalid);
    CHECK(bad.reason == "invalid_syntax");
    CHECK(bad.score == 0);
    CHECK(bad.detail == "{}");
    CHECK(bad.credits == 0);
    // As POST /v2/email/validate reports a special-use domain.
    CHECK(r->items[1].reason == "invalid_domain");
    const auto& ok = r->items[2];
    CHECK_FALSE(ok.done);
    CHECK(status_text(ok).empty());
    CHECK(ok.email == "ok@acme.io");
  }

  TEST_CASE("intake follows the syntax options it is given") {
    intake_options opts;
    opts.syntax.allow_test_domains = true;
    auto r = read_csv("x@foo.test\ny@example.com", opts);
    REQUIRE(r);
    CHECK(compact(r->items) ==
          std::vector<std::string>{"x@foo.test", "y@example.com"});
    CHECK(r->invalid_rows == 0);
  }

  TEST_CASE("intake stops past the address limit") {
    struct limit_row {
      std::string input;
      bool deduplicate;
      std::string message; // "" when accepted
    };
    const std::string over =
        "the file holds more than 3 addresses after de-duplication; the "
        "limit is 3";
    const limit_row rows[] = {
        {"a@acme.io\nb@acme.io\nc@acme.io", true, ""},
        {"a@acme.io\nb@acme.io\nc@acme.io\nd@acme.io", true, over},
        {"a@acme.io\nb@acme.io\nc@acme.io\na@ACME.io\nbad\nbad", true, ""},
        {"a@acme.io\nb@acme.io\nc@acme.io\na@acme.io", false,
         "the file holds more than 3 addresses; the limit is 3"},
        // The limit is found before a later CSV error.
        {"a@acme.io\nb@acme.io\nc@acme.io\nd@acme.io\n\"", true, over},
    };
    for (const auto& row : rows) {
      CAPTURE(row.input);
      intake_options opts;
      opts.max_addresses = 3;
      opts.deduplicate = row.deduplicate;
      auto r = read_csv(row.input, opts);
      if (row.message.empty()) {
        CHECK(r);
      } else {
        REQUIRE_FALSE(r);
        CHECK(r.error_value().code == errc::validation_failed);
        CHECK(r.error_value().message == row.message);
      }
    }
  }

  TEST_CASE("intake accepts 200000 addresses and refuses 200001") {
    auto at_limit = numbered_rows(200000) + "user7@ACME.io\n";
    auto r = read_csv(at_limit, {});
    REQUIRE(r);
    CHECK(r->unique_emails == 200000);
    CHECK(r->duplicates_removed == 1);
    CHECK(r->items.size() == 200000);
    CHECK(r->items.back().seq == 199999);

    auto over = numbered_rows(200001);
    intake in{intake_options{}};
    std::string_view rest{over};
    bool refused = false;
    while (!rest.empty() && !refused) {
      auto fed = in.feed(rest.substr(0, 65536));
      rest.remove_prefix(std::min<std::size_t>(65536, rest.size()));
      refused = !fed;
    }
    auto done = in.finish();
    REQUIRE_FALSE(done);
    CHECK(done.error_value().code == errc::validation_failed);
    CHECK(done.error_value().message ==
          "the file holds more than 200000 addresses after de-duplication; "
          "the limit is 200000");
  }

  TEST_CASE("intake lists at most 20 header names in its message") {
    std::string header;
    // Built by append: GCC 12 warns falsely on chains of operator+.
    for (int i = 1; i <= 25; ++i)
      header.append(i > 1 ? ",c" : "c").append(std::to_string(i));
    intake_options opts;
    opts.email_column = "email";
    auto r = read_csv(header + "\nx", opts);
    REQUIRE_FALSE(r);
    CHECK(r.error_value().message ==
          "no column named 'email'; the header has: c1, c2, c3, c4, c5, c6, "
          "c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, "
          "c20, ... (25 columns)");
  }

  TEST_CASE("intake fills the job record's counts") {
    auto r = read_csv("E-mail\na@acme.io\na@acme.io\nbad\n", {});
    REQUIRE(r);
    job j;
    fill_job(j, *r);
    CHECK(j.email_column == "E-mail");
    CHECK(j.total_rows == 3);
    CHECK(j.unique_emails == 1);
    CHECK(j.duplicates_removed == 1);
    CHECK(j.invalid_rows == 1);
    CHECK(j.items() == 2);
  }
}
