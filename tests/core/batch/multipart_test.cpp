#include "core/batch/intake.hpp"
#include "core/batch/multipart.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core;
using namespace mailassay::core::batch;

namespace {

struct boundary_row {
  std::string content_type;
  std::string boundary; // "" when refused
  std::string message;
};

std::vector<boundary_row> boundary_rows() {
  const std::string none =
      "the multipart/form-data Content-Type has no boundary parameter";
  return {
      {"multipart/form-data; boundary=abc", "abc", ""},
      {"multipart/form-data;boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
       "----WebKitFormBoundary7MA4YWxkTrZu0gW", ""},
      {"multipart/form-data; boundary=\"a b;c\"", "a b;c", ""},
      {"multipart/form-data; boundary=\"a\\\"b\"", "a\"b", ""},
      {"Multipart/Form-Data; charset=utf-8; BOUNDARY=xyz", "xyz", ""},
      {"multipart/form-data; boundary=xyz ; charset=utf-8", "xyz", ""},
      {"multipart/form-data", "", none},
      {"multipart/form-data; boundary=", "", none},
      {"multipart/form-data; boundary=\"\"", "", none},
      {"multipart/form-data; charset=utf-8", "", none},
      {"text/csv", "",
       "the Content-Type is 'text/csv', not multipart/form-data"},
      {"multipart/mixed; boundary=abc", "",
       "the Content-Type is 'multipart/mixed', not multipart/form-data"},
      {"", "", "the Content-Type is '', not multipart/form-data"},
  };
}

struct part_view {
  std::string name, filename, content_type, body;
  bool operator==(const part_view&) const = default;
};

std::vector<part_view> views(const std::vector<multipart_part>& parts) {
  std::vector<part_view> out;
  for (const auto& p : parts)
    out.push_back({p.name, p.filename, p.content_type, std::string{p.body}});
  return out;
}

struct body_row {
  std::string body;
  std::vector<part_view> parts;
};

std::vector<body_row> body_rows() {
  return {
      // RFC 7578 §4 with CRLF; a file whose content has CRLF line ends.
      {"--abc\r\n"
       "Content-Disposition: form-data; name=\"deduplicate\"\r\n"
       "\r\n"
       "false\r\n"
       "--abc\r\n"
       "Content-Disposition: form-data; name=\"file\"; "
       "filename=\"list.csv\"\r\n"
       "Content-Type: text/csv\r\n"
       "\r\n"
       "email\r\na@acme.io\r\nb@acme.io\r\n"
       "\r\n"
       "--abc--\r\n",
       {{"deduplicate", "", "", "false"},
        {"file", "list.csv", "text/csv",
         "email\r\na@acme.io\r\nb@acme.io\r\n"}}},
      // LF-only line ends are tolerated.
      {"--abc\n"
       "content-disposition: form-data; name=file; filename=a.csv\n"
       "\n"
       "x\ny\n"
       "--abc--",
       {{"file", "a.csv", "", "x\ny"}}},
      // Preamble and epilogue are ignored; padding after a boundary.
      {"This is the preamble.\r\n--abc  \r\n"
       "Content-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
       "--abc--\r\nepilogue\r\n--abc\r\n",
       {{"a", "", "", "1"}}},
      // Boundary-like text that is not a delimiter stays content.
      {"--abc\r\n"
       "Content-Disposition: form-data; name=\"a\"\r\n\r\n"
       "--abcdef\r\nx--abc\r\n--abc-\r\n"
       "--abc--",
       {{"a", "", "", "--abcdef\r\nx--abc\r\n--abc-"}}},
      // Empty content; a content that is just a line end.
      {"--abc\r\n"
       "Content-Disposition: form-data; name=\"a\"\r\n\r\n"
       "\r\n--abc\r\n"
       "Content-Disposition: form-data; name=\"b\"\r\n\r\n"
       "\r\n\r\n--abc--",
       {{"a", "", "", ""}, {"b", "", "", "\r\n"}}},
      // Quoted file names: escaped quotes, Windows paths as sent.
      {"--abc\r\n"
       "Content-Disposition: form-data; name=\"f\"; "
       "filename=\"a\\\"b.csv\"\r\n\r\nx\r\n"
       "--abc\r\n"
       "Content-Disposition: form-data; name=\"g\"; "
       "filename=\"C:\\dir\\x.csv\"\r\n\r\ny\r\n"
       "--abc--",
       {{"f", "a\"b.csv", "", "x"}, {"g", "C:\\dir\\x.csv", "", "y"}}},
      // Only the closing delimiter: no parts.
      {"--abc--\r\n", {}},
  };
}

struct body_error_row {
  std::string body;
  std::string message;
};

std::vector<body_error_row> body_error_rows() {
  return {
      {"", "the multipart body never contains its boundary '--abc'"},
      {"hello\r\n--ab\r\n",
       "the multipart body never contains its boundary '--abc'"},
      {"--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n",
       "the multipart body ends without its closing boundary '--abc--'"},
      {"--abc\r\nContent-Disposition: form-data; name=\"a\"",
       "the multipart body ends without its closing boundary '--abc--'"},
      {"--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n"
       "--abc",
       "the multipart body ends without its closing boundary '--abc--'"},
      {"--abc\r\nContent-Type: text/plain\r\n\r\nx\r\n--abc--",
       "multipart part 1 has no Content-Disposition name"},
      {"--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n"
       "--abc\r\nContent-Disposition: form-data; filename=\"x\"\r\n\r\ny\r\n"
       "--abc--",
       "multipart part 2 has no Content-Disposition name"},
      {"--abc\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nx\r\n"
       "--abc--",
       "multipart part 1 has no Content-Disposition name"},
      {"--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n--abc--\r\n",
       "multipart part 1 has no empty line after its headers"},
  };
}

} // namespace

TEST_SUITE("core.batch") {
  TEST_CASE("multipart boundary comes from the Content-Type") {
    for (const auto& row : boundary_rows()) {
      CAPTURE(row.content_type);
      auto b = multipart_boundary(row.content_type);
      if (row.boundary.empty()) {
        REQUIRE_FALSE(b);
        CHECK(b.error_value().code == errc::bad_request);
        CHECK(b.error_value().message == row.message);
      } else {
        REQUIRE(b);
        CHECK(*b == row.boundary);
      }
    }
  }

  TEST_CASE("multipart bodies split into named parts") {
    for (const auto& row : body_rows()) {
      CAPTURE(row.body);
      auto parts = parse_multipart_body(row.body, "abc");
      REQUIRE_MESSAGE(parts, (parts ? "" : parts.error_value().message));
      CHECK(views(*parts) == row.parts);
    }
  }

  TEST_CASE("multipart parts view the body they came from") {
    std::string body = "--abc\r\nContent-Disposition: form-data; "
                       "name=\"file\"\r\n\r\nemail\r\nx@acme.io\r\n--abc--";
    auto parts = parse_multipart("multipart/form-data; boundary=abc", body);
    REQUIRE(parts);
    REQUIRE(parts->size() == 1);
    auto b = (*parts)[0].body;
    CHECK(b.data() >= body.data());
    CHECK(b.data() + b.size() <= body.data() + body.size());
    auto read = read_csv(b, {});
    REQUIRE(read);
    CHECK(read->email_column == "email");
    CHECK(read->unique_emails == 1);
  }

  TEST_CASE("multipart refuses broken bodies with a message") {
    for (const auto& row : body_error_rows()) {
      CAPTURE(row.body);
      auto parts = parse_multipart_body(row.body, "abc");
      REQUIRE_FALSE(parts);
      CHECK(parts.error_value().code == errc::bad_request);
      CHECK(parts.error_value().message == row.message);
    }
    auto no_boundary = parse_multipart("multipart/form-data", "--abc--");
    REQUIRE_FALSE(no_boundary);
    CHECK(no_boundary.error_value().code == errc::bad_request);
  }
}
