#include "core/webhooks/http_message.hpp"

#include "core/base/ascii.hpp"

#include <algorithm>

namespace mailassay::core::webhooks {

namespace {

// RFC 9110 §5.6.2: tchar.
bool is_tchar(char c) {
  if (is_ascii_alnum(c))
    return true;
  return std::string_view{"!#$%&'*+-.^_`|~"}.find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

// RFC 9110 §5.5: visible ASCII, spaces and tabs; obs-text is not written.
bool is_field_value(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return c == '\t' || (c >= 0x20 && c < 0x7f);
  });
}

// The end of the head that starts at `from`: the index after its empty
// line, or npos. Bare LF line ends are accepted (RFC 9112 §2.2).
std::size_t head_end(std::string_view s, std::size_t from) {
  for (auto i = s.find('\n', from); i != std::string_view::npos;
       i = s.find('\n', i + 1)) {
    if (i + 1 < s.size() && s[i + 1] == '\n')
      return i + 2;
    if (i + 2 < s.size() && s[i + 1] == '\r' && s[i + 2] == '\n')
      return i + 3;
  }
  return std::string_view::npos;
}

} // namespace

expected<std::string> request_head(std::string_view method,
                                   const target_url& url,
                                   std::span<const header_field> fields,
                                   std::size_t body_size) {
  if (!is_token(method))
    return make_error(errc::bad_request, "bad request method");
  std::string out;
  out.reserve(256);
  out.append(method).append(" ").append(url.target).append(" HTTP/1.1\r\n");
  out.append("Host: ").append(url.host_header()).append("\r\n");
  for (const auto& f : fields) {
    if (!is_token(f.name) || !is_field_value(f.value))
      return make_error(errc::bad_request,
                        "bad header field \"" + f.name + "\"");
    out.append(f.name).append(": ").append(f.value).append("\r\n");
  }
  out.append("Content-Length: ").append(std::to_string(body_size));
  out.append("\r\nConnection: close\r\n\r\n");
  return out;
}

response_head read_response_head(std::string_view received,
                                 std::size_t max_bytes) {
  std::size_t start = 0;
  for (;;) {
    auto rest = received.substr(start);
    // RFC 9112 §4: HTTP-version SP 3DIGIT SP reason-phrase.
    constexpr std::string_view prefix = "HTTP/1.";
    auto known = std::min(rest.size(), prefix.size());
    if (rest.substr(0, known) != prefix.substr(0, known))
      return {head_state::malformed, 0};
    auto end = head_end(received, start);
    if (end == std::string_view::npos)
      return {received.size() > max_bytes ? head_state::too_large
                                          : head_state::incomplete,
              0};
    if (end > max_bytes)
      return {head_state::too_large, 0};
    if (rest.size() < 13 || rest[8] != ' ' ||
        !std::all_of(rest.begin() + 9, rest.begin() + 12, is_ascii_digit) ||
        (rest[12] != ' ' && rest[12] != '\r' && rest[12] != '\n'))
      return {head_state::malformed, 0};
    int code = (rest[9] - '0') * 100 + (rest[10] - '0') * 10 + (rest[11] - '0');
    if (code < 100)
      return {head_state::malformed, 0};
    if (code >= 200 || code == 101)
      return {head_state::complete, code};
    start = end;
  }
}

} // namespace mailassay::core::webhooks
