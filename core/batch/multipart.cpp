#include "core/batch/multipart.hpp"

#include "core/base/ascii.hpp"

#include <optional>
#include <utility>

namespace mailassay::core::batch {

namespace {

error bad_request(std::string message) {
  return make_error(errc::bad_request, std::move(message));
}

// A header value with parameters: `type; a=b; c="d"` (RFC 7231 §3.1.1.1,
// RFC 6266 §4.1).
struct header_value {
  std::string_view value;
  std::vector<std::pair<std::string, std::string>> params;

  std::optional<std::string> param(std::string_view name) const {
    for (auto& [n, v] : params)
      if (ascii_iequals(n, name))
        return v;
    return std::nullopt;
  }
};

header_value parse_header_value(std::string_view s) {
  header_value out;
  auto semi = s.find(';');
  out.value = trim_blanks(s.substr(0, semi));
  auto i = semi == s.npos ? s.size() : semi + 1;
  while (i < s.size()) {
    auto name_end = s.find_first_of("=;", i);
    auto name = trim_blanks(s.substr(i, name_end - i));
    if (name_end == s.npos || s[name_end] == ';') {
      i = name_end == s.npos ? s.size() : name_end + 1;
      continue;
    }
    i = name_end + 1;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
      ++i;
    std::string value;
    if (i < s.size() && s[i] == '"') {
      // Browsers send `\` in file names unescaped (WHATWG HTML, form
      // submission): only `\"` and `\\` are taken as escapes.
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size() &&
            (s[i + 1] == '"' || s[i + 1] == '\\'))
          ++i;
        value += s[i];
      }
      auto next = s.find(';', i);
      i = next == s.npos ? s.size() : next + 1;
    } else {
      auto end = s.find(';', i);
      value = trim_blanks(s.substr(i, end - i));
      i = end == s.npos ? s.size() : end + 1;
    }
    out.params.emplace_back(std::string{name}, std::move(value));
  }
  return out;
}

struct delimiter {
  std::size_t at = std::string_view::npos; // where "--boundary" starts
  std::size_t after = 0;                   // past its line end
  bool close = false;                      // "--boundary--"
};

// RFC 2046 §5.1.1: a delimiter is "--boundary" at the start of the body or
// of a line, then "--" (the close delimiter) or optional white space and
// the line end.
delimiter find_delimiter(std::string_view body, std::string_view dash,
                         std::size_t from) {
  for (auto p = body.find(dash, from); p != body.npos;
       p = body.find(dash, p + 1)) {
    if (p != 0 && body[p - 1] != '\n')
      continue;
    auto t = p + dash.size();
    if (body.substr(t, 2) == "--")
      return {p, t + 2, true};
    while (t < body.size() && (body[t] == ' ' || body[t] == '\t'))
      ++t;
    if (t < body.size() && body[t] == '\n')
      return {p, t + 1, false};
    if (body.substr(t, 2) == "\r\n")
      return {p, t + 2, false};
  }
  return {};
}

} // namespace

expected<std::string> multipart_boundary(std::string_view content_type) {
  auto h = parse_header_value(content_type);
  if (!ascii_iequals(h.value, "multipart/form-data"))
    return bad_request("the Content-Type is '" + std::string{h.value} +
                       "', not multipart/form-data");
  auto boundary = h.param("boundary");
  if (!boundary || boundary->empty())
    return bad_request("the multipart/form-data Content-Type has no boundary "
                       "parameter");
  return std::move(*boundary);
}

expected<std::vector<multipart_part>>
parse_multipart_body(std::string_view body, std::string_view boundary) {
  if (boundary.empty())
    return bad_request("the multipart boundary is empty");
  std::string dash = "--";
  dash += boundary;
  auto missing_close = [&] {
    return bad_request("the multipart body ends without its closing "
                       "boundary '" +
                       dash + "--'");
  };
  auto d = find_delimiter(body, dash, 0);
  if (d.at == body.npos)
    return bad_request("the multipart body never contains its boundary '" +
                       dash + "'");
  std::vector<multipart_part> parts;
  while (!d.close) {
    auto number = std::to_string(parts.size() + 1);
    multipart_part part;
    bool named = false;
    auto pos = d.after;
    for (;;) {
      auto nl = body.find('\n', pos);
      if (nl == body.npos)
        return missing_close();
      auto line = body.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
      if (line.starts_with(dash))
        return bad_request("multipart part " + number +
                           " has no empty line after its headers");
      pos = nl + 1;
      if (line.empty())
        break;
      auto colon = line.find(':');
      if (colon == line.npos)
        continue;
      auto name = trim_blanks(line.substr(0, colon));
      auto value = trim_blanks(line.substr(colon + 1));
      if (ascii_iequals(name, "Content-Disposition")) {
        auto h = parse_header_value(value);
        if (auto n = h.param("name"); n && !n->empty()) {
          part.name = std::move(*n);
          named = true;
        }
        part.filename = h.param("filename").value_or("");
      } else if (ascii_iequals(name, "Content-Type")) {
        part.content_type = value;
      }
    }
    auto next = find_delimiter(body, dash, pos);
    if (next.at == body.npos)
      return missing_close();
    // The line end before a delimiter belongs to it (RFC 2046 §5.1.1).
    auto end = next.at;
    if (end > pos && body[end - 1] == '\n')
      --end;
    if (end > pos && body[end - 1] == '\r')
      --end;
    part.body = body.substr(pos, end - pos);
    if (!named)
      return bad_request("multipart part " + number +
                         " has no Content-Disposition name");
    parts.push_back(std::move(part));
    d = next;
  }
  return parts;
}

expected<std::vector<multipart_part>>
parse_multipart(std::string_view content_type, std::string_view body) {
  auto boundary = multipart_boundary(content_type);
  if (!boundary)
    return boundary.error_value();
  return parse_multipart_body(body, *boundary);
}

} // namespace mailassay::core::batch
