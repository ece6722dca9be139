// Fuzz target: multipart/form-data bodies of batch uploads
// (core/batch/multipart.hpp). Oracles: every part is named and views the
// body, in order, without overlap; the parts, written out again with the
// same boundary (CRLF line ends, `\"` and `\\` escaped as the parser reads
// them), parse to the same parts.
//
// Input: the Content-Type header value up to the first LF, then the body.

#include "fuzz/fuzz_check.hpp"

#include "core/batch/multipart.hpp"

#include <cstdint>
#include <string>
#include <string_view>

using mailassay::core::batch::multipart_boundary;
using mailassay::core::batch::multipart_part;
using mailassay::core::batch::parse_multipart;
using mailassay::core::batch::parse_multipart_body;

namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

std::string written(const std::vector<multipart_part>& parts,
                    std::string_view boundary) {
  std::string out;
  for (auto& p : parts) {
    out += "--";
    out += boundary;
    out += "\r\nContent-Disposition: form-data; name=" + quoted(p.name);
    if (!p.filename.empty())
      out += "; filename=" + quoted(p.filename);
    out += "\r\n";
    if (!p.content_type.empty())
      out += "Content-Type: " + p.content_type + "\r\n";
    out += "\r\n";
    out += p.body;
    out += "\r\n";
  }
  out += "--";
  out += boundary;
  out += "--\r\n";
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string_view input{reinterpret_cast<const char*>(data), size};
  auto nl = input.find('\n');
  if (nl == input.npos)
    return 0;
  auto content_type = input.substr(0, nl);
  // The body in a buffer of its own, so that ASan sees a view past it.
  std::string body{input.substr(nl + 1)};
  auto parts = parse_multipart(content_type, body);
  if (!parts) {
    MAILASSAY_FUZZ_CHECK(!parts.error_value().message.empty());
    return 0;
  }
  auto boundary = multipart_boundary(content_type);
  MAILASSAY_FUZZ_CHECK(boundary && !boundary->empty());
  const char* at = body.data();
  for (auto& p : *parts) {
    MAILASSAY_FUZZ_CHECK(!p.name.empty());
    MAILASSAY_FUZZ_CHECK(p.body.data() >= at);
    MAILASSAY_FUZZ_CHECK(p.body.data() + p.body.size() <=
                         body.data() + body.size());
    at = p.body.data() + p.body.size();
  }
  auto again_text = written(*parts, *boundary);
  auto again = parse_multipart_body(again_text, *boundary);
  MAILASSAY_FUZZ_CHECK(again.has_value());
  MAILASSAY_FUZZ_CHECK(again->size() == parts->size());
  for (std::size_t i = 0; i < parts->size(); ++i) {
    auto& a = (*parts)[i];
    auto& b = (*again)[i];
    MAILASSAY_FUZZ_CHECK(a.name == b.name);
    MAILASSAY_FUZZ_CHECK(a.filename == b.filename);
    MAILASSAY_FUZZ_CHECK(a.content_type == b.content_type);
    MAILASSAY_FUZZ_CHECK(a.body == b.body);
  }
  return 0;
}
