#include "http/codec/batch_upload.hpp"

#include "core/base/ascii.hpp"
#include "core/base/utf8.hpp"
#include "core/batch/multipart.hpp"
#include "http/codec/reader.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace mailassay::http::codec {

namespace {

// Reads a boolean option.
std::optional<core::error> read_flag(const std::optional<std::string>& text,
                                     const char* name, bool& out) {
  if (!text)
    return std::nullopt;
  auto v = core::ascii_lower(*text);
  if (v == "true" || v == "1")
    out = true;
  else if (v == "false" || v == "0")
    out = false;
  else
    return unprocessable(std::string{name} + " must be a boolean value");
  return std::nullopt;
}

// The options a multipart form may carry besides its `file`; each may also
// come as a query parameter, but not both ways at once.
constexpr const char* form_options[] = {"deduplicate", "smtp", "emailColumn"};

} // namespace

core::expected<use_cases::accounts::batch_upload>
batch_upload(const request_view& req, std::int64_t max_file_bytes) {
  use_cases::accounts::batch_upload in;
  in.file_name = "upload.csv";
  std::map<std::string, std::optional<std::string>> options;
  for (auto* name : form_options)
    options[name] = req.query_param(name);
  if (auto name = req.query_param("fileName"))
    in.file_name = *name;
  auto type =
      core::ascii_lower(std::string{req.header("Content-Type").value_or("")});
  if (type.rfind("multipart/form-data", 0) == 0) {
    auto parts = core::batch::parse_multipart(
        std::string{req.header("Content-Type").value_or("")}, req.body);
    if (!parts)
      return parts.error_value();
    std::vector<std::string> problems;
    // One message per name, in the order met.
    auto problem = [&](std::string m) {
      if (std::find(problems.begin(), problems.end(), m) == problems.end())
        problems.push_back(std::move(m));
    };
    std::map<std::string, bool> from_form;
    bool found = false;
    for (auto& p : *parts) {
      auto shown = core::utf8_scrub(p.name, 64);
      if (p.name == "file") {
        if (found) {
          problem("multipart field file must be given only once");
          continue;
        }
        in.csv = p.body;
        if (!p.filename.empty())
          in.file_name = p.filename;
        found = true;
        continue;
      }
      auto option = options.find(p.name);
      if (option == options.end()) {
        problem("multipart field " + shown + " should not exist");
      } else if (from_form[p.name]) {
        problem("multipart field " + shown + " must be given only once");
      } else if (option->second) {
        problem(shown + " must be given either as a query parameter or as a "
                        "form field, not both");
      } else {
        option->second = std::string{p.body};
        from_form[p.name] = true;
      }
    }
    if (!problems.empty()) {
      auto e = core::make_error(core::errc::validation_failed, "");
      e.details = std::move(problems);
      return e;
    }
    if (!found)
      return bad_request("The multipart body has no 'file' part with the CSV");
  } else if (type.rfind("text/csv", 0) == 0 ||
             type.rfind("text/plain", 0) == 0 ||
             type.rfind("application/csv", 0) == 0 ||
             type.rfind("application/octet-stream", 0) == 0) {
    in.csv = req.body;
  } else {
    return bad_request("Upload the CSV as multipart/form-data (field 'file') "
                       "or as a text/csv body");
  }
  // The limit is the file's: a multipart body is a little larger.
  if (static_cast<std::int64_t>(in.csv.size()) > max_file_bytes)
    return core::make_error(core::errc::payload_too_large, "");
  if (auto e = read_flag(options["deduplicate"], "deduplicate", in.deduplicate))
    return *e;
  if (auto e = read_flag(options["smtp"], "smtp", in.smtp))
    return *e;
  if (auto& column = options["emailColumn"])
    in.email_column = *column;
  // Stored, then written as JSON in every listing: a name that is not
  // UTF-8 (a multipart filename is raw bytes) must not make those fail.
  in.file_name = core::utf8_scrub(in.file_name, 255);
  return in;
}

} // namespace mailassay::http::codec
