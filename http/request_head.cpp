#include "http/request_head.hpp"

#include "core/base/ascii.hpp"
#include "core/base/excerpt.hpp"
#include "core/base/word_bytes.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace mailassay::http {

namespace {

// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" /
// "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA.
constexpr auto token_chars = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c)
    t[static_cast<std::size_t>(c)] = true;
  for (int c = 'a'; c <= 'z'; ++c)
    t[static_cast<std::size_t>(c)] = true;
  for (int c = 'A'; c <= 'Z'; ++c)
    t[static_cast<std::size_t>(c)] = true;
  for (char c : std::string_view{"!#$%&'*+-.^_`|~"})
    t[static_cast<unsigned char>(c)] = true;
  return t;
}();

bool is_token(std::string_view s) {
  if (s.empty())
    return false;
  for (unsigned char c : s)
    if (!token_chars[c])
      return false;
  return true;
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view lower_b) {
  if (a.size() != lower_b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower_b[i])
      return false;
  return true;
}

// A control character a field value may not hold (RFC 9110 §5.5: CR, LF and
// NUL are dangerous, the other CTLs are not field-vchar; HTAB is allowed).
bool forbidden_in_value(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}

// Whether `s` holds a byte `bad` says is bad. Eight bytes at a time: a
// word with no byte below `Floor` and none equal to 0x7F (most words of
// most heads) is passed without looking at its bytes.
template <unsigned Floor, class Bad>
bool any_byte(std::string_view s, Bad bad) {
  const char* p = s.data();
  std::size_t n = s.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    auto x = core::load_word(p + i);
    if (core::has_byte_below(x, Floor) || core::has_byte(x, 0x7f))
      for (std::size_t k = 0; k < 8; ++k)
        if (bad(static_cast<unsigned char>(p[i + k])))
          return true;
  }
  for (; i < n; ++i)
    if (bad(static_cast<unsigned char>(p[i])))
      return true;
  return false;
}

// A field value may hold HTAB, SP, visible ASCII and obs-text.
bool has_forbidden(std::string_view s) {
  return any_byte<0x20>(s, forbidden_in_value);
}

// A request target may hold visible ASCII and (as the parser admits)
// obs-text; no space, no control character.
bool bad_target(std::string_view s) {
  return any_byte<0x21>(s,
                        [](unsigned char c) { return c < 0x21 || c == 0x7f; });
}

// A value the way the parser reads a number or a coding in it: whitespace
// before it (the parser skips SP and HTAB there), spaces only after it (a
// tab after a Content-Length or after `chunked` is an error to the parser,
// or makes it read another coding).
std::string_view trim_value(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

head_facts refuse(int status, std::string message) {
  head_facts f;
  f.status = status;
  f.message = std::move(message);
  return f;
}

// The methods some route answers (RFC 9110 §9; PUT gets its 405 with
// Allow). Any other token is a method this server does not implement.
bool known_method(std::string_view m) {
  return m == "GET" || m == "POST" || m == "HEAD" || m == "PUT" ||
         m == "PATCH" || m == "DELETE" || m == "OPTIONS";
}

// Whether the authority of an absolute-form target (up to its path or
// query) holds only what http_parser admits there: userinfo characters,
// brackets of an IPv6 address, one `@` (RFC 3986 §3.2).
bool authority_ok(std::string_view rest) {
  // "http://" alone ends the target where the parser wants a host.
  if (rest.empty())
    return false;
  auto authority = rest.substr(0, rest.find_first_of("/?"));
  int ats = 0;
  for (unsigned char c : authority) {
    if (c == '@') {
      if (++ats > 1)
        return false;
      continue;
    }
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9');
    if (!alnum && (c == 0 || !std::strchr("-_.!~*'()%;:&=+$,[]", c)))
      return false;
  }
  return true;
}

// A line of the head without its end (CRLF, or a bare LF). A CR elsewhere
// is a control character the checks of each part refuse.
std::string_view line_at(std::string_view head, std::size_t from,
                         std::size_t nl) {
  auto text = head.substr(from, nl - from);
  if (!text.empty() && text.back() == '\r')
    text.remove_suffix(1);
  return text;
}

struct request_line {
  head_facts facts;
  bool http10 = false;
};

// RFC 9112 §3: method SP request-target SP HTTP-version.
request_line check_request_line(std::string_view text) {
  request_line out;
  auto fail = [&](int status, std::string message) {
    out.facts = refuse(status, std::move(message));
    return out;
  };
  auto sp1 = text.find(' ');
  auto method = text.substr(0, sp1);
  if (!is_token(method))
    return fail(400, "Malformed request line: the method is not a token");
  if (sp1 == std::string_view::npos)
    return fail(400, "Malformed request line: no request target");
  auto rest = text.substr(sp1 + 1);
  auto sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos)
    return fail(400, "Malformed request line: no HTTP version");
  auto target = rest.substr(0, sp2);
  auto version = rest.substr(sp2 + 1);
  if (target.empty())
    return fail(400, "Malformed request line: no request target");
  if (version.find(' ') != std::string_view::npos)
    return fail(400, "Malformed request line: more than three parts (a "
                     "space in the request target must be sent as %20)");
  if (bad_target(target))
    return fail(400, "Malformed request line: a control character in the "
                     "request target");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" ||
      version[5] < '0' || version[5] > '9' || version[6] != '.' ||
      version[7] < '0' || version[7] > '9')
    return fail(400, "Malformed request line: the HTTP version is not "
                     "HTTP/1.1");
  if (version[5] != '1')
    return fail(505, core::excerpt(version) +
                         " is not supported; this server speaks HTTP/1.1");
  if (!known_method(method))
    return fail(501, "Method " + core::excerpt(method) + " is not implemented");
  // Origin form (a path) is nearly every request; the other forms are
  // looked for only when the target is not one.
  if (target.front() != '/') {
    bool asterisk = target == "*" && method == "OPTIONS";
    auto scheme_end = target.find("://");
    bool absolute = scheme_end != std::string_view::npos &&
                    (iequals(target.substr(0, scheme_end), "http") ||
                     iequals(target.substr(0, scheme_end), "https"));
    if (!asterisk && !absolute)
      return fail(400, "Malformed request line: the request target is not a "
                       "path");
    if (absolute && !authority_ok(target.substr(scheme_end + 3)))
      return fail(400, "Malformed request line: a bad host in the request "
                       "target");
  }
  out.http10 = version[7] == '0';
  // The router also takes the path with a trailing slash.
  constexpr std::string_view upload = "/v2/batch/upload";
  if (method == "POST" && target.substr(0, upload.size()) == upload) {
    auto after = target.substr(upload.size());
    if (!after.empty() && after.front() == '/')
      after.remove_prefix(1);
    out.facts.upload =
        after.empty() || after.front() == '?' || after.front() == '#';
  }
  return out;
}

// The refusal of a head over `max_bytes`: 414 when the request line alone
// is (no line end within the limit), else 431.
head_facts too_large(std::string_view head, const head_limits& limits) {
  auto nl = head.substr(0, limits.max_bytes + 1).find('\n');
  if (nl == std::string_view::npos)
    return refuse(414, "Request line longer than " +
                           std::to_string(limits.max_bytes) + " bytes");
  return refuse(431, "Request head longer than " +
                         std::to_string(limits.max_bytes) + " bytes");
}

// A field line: name ":" OWS value OWS (RFC 9112 §5). 0 when acceptable.
int check_field(std::string_view text, std::string& message,
                std::string_view& name, std::string_view& value) {
  if (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    message = "Malformed header field: obsolete line folding (RFC 9112 "
              "§5.2) is not accepted";
    return 400;
  }
  // The name and its colon in one pass.
  std::size_t colon = 0;
  while (colon < text.size() &&
         token_chars[static_cast<unsigned char>(text[colon])])
    ++colon;
  if (colon == text.size()) {
    message = "Malformed header field: a line without a colon";
    return 400;
  }
  name = text.substr(0, colon);
  if (colon == 0 || text[colon] != ':') {
    message = "Malformed header field: the name '" +
              core::excerpt(text.substr(0, text.find(':'))) +
              "' is not a token (no whitespace before the colon)";
    return 400;
  }
  value = text.substr(colon + 1);
  if (has_forbidden(value)) {
    message = "Malformed header field: " + core::excerpt(name) +
              " holds a control character (CR, LF, NUL ...)";
    return 400;
  }
  return 0;
}

} // namespace

head_facts check_head(std::string_view head, const head_limits& limits) {
  if (head.size() > limits.max_bytes)
    return too_large(head, limits);
  auto nl = head.find('\n');
  auto rl = check_request_line(line_at(head, 0, nl));
  if (rl.facts.status)
    return rl.facts;
  head_facts f = std::move(rl.facts);
  std::size_t fields = 0;
  std::size_t hosts = 0;
  std::size_t chunked = 0;
  bool has_length = false;
  bool has_encoding = false;
  bool malformed_encoding = false;
  std::string_view unknown_coding;
  std::string_view name;
  std::string_view value;
  for (auto p = nl + 1; p < head.size();) {
    auto end = head.find('\n', p);
    if (end == std::string_view::npos)
      end = head.size();
    auto text = line_at(head, p, end);
    if (text.empty())
      break;
    std::string message;
    if (auto status = check_field(text, message, name, value))
      return refuse(status, std::move(message));
    if (++fields > limits.max_fields)
      return refuse(431, "More than " + std::to_string(limits.max_fields) +
                             " header fields");
    // Most fields are none of these: their length says so.
    auto n = name.size();
    // http_parser takes any name starting with Transfer-Encoding for one
    // (its flag is set on the prefix) and then refuses the request.
    if (n > 17 && iequals(name.substr(0, 17), "transfer-encoding"))
      return refuse(400, "Malformed header field: " + core::excerpt(name) +
                             " is too close to Transfer-Encoding");
    if (n != 14 && n != 17 && n != 4) {
      p = end + 1;
      continue;
    }
    if (iequals(name, "content-length")) {
      if (has_length)
        return refuse(400, "Content-Length given more than once");
      has_length = true;
      auto digits = trim_value(value);
      if (digits.empty())
        return refuse(400, "Invalid Content-Length");
      std::uint64_t n = 0;
      for (char c : digits) {
        if (c < '0' || c > '9')
          return refuse(400, "Invalid Content-Length");
        n = n > (UINT64_MAX - 9) / 10 ? UINT64_MAX
                                      : n * 10 + static_cast<unsigned>(c - '0');
      }
      f.length = n;
      f.length_at = p;
    } else if (iequals(name, "transfer-encoding")) {
      // One field line: how the parser combines several is its own affair.
      if (has_encoding)
        return refuse(400, "Transfer-Encoding given more than once");
      has_encoding = true;
      // The one value accepted: `chunked` alone, as the parser matches it
      // (it takes `chunked,` or `chunked<TAB>` for another coding and then
      // refuses the request).
      if (iequals(trim_value(value), "chunked")) {
        ++chunked;
        p = end + 1;
        continue;
      }
      bool chunked_here = false;
      // A list (RFC 9110 §5.6.1): empty elements are allowed and ignored.
      for (auto rest = value; !rest.empty();) {
        auto comma = rest.find(',');
        auto coding = core::trim_blanks(rest.substr(0, comma));
        rest.remove_prefix(comma == std::string_view::npos ? rest.size()
                                                           : comma + 1);
        if (coding.empty())
          continue;
        if (iequals(coding, "chunked"))
          chunked_here = true;
        else if (unknown_coding.empty())
          unknown_coding = coding;
      }
      if (chunked_here && unknown_coding.empty())
        malformed_encoding = true;
    } else if (iequals(name, "host")) {
      ++hosts;
    } else if (iequals(name, "x-body-refused")) {
      return refuse(400, "Header X-Body-Refused is reserved");
    }
    p = end + 1;
  }
  // RFC 9112 §6.1: either is a way to frame the body, both is a smuggling
  // attempt or a broken client.
  if (has_length && has_encoding)
    return refuse(400, "Content-Length and Transfer-Encoding in one request");
  if (has_encoding && rl.http10)
    return refuse(400, "Transfer-Encoding in an HTTP/1.0 request");
  if (!unknown_coding.empty())
    return refuse(501, "Transfer coding " + core::excerpt(unknown_coding) +
                           " is not implemented (only chunked)");
  if (malformed_encoding)
    return refuse(400, "Malformed Transfer-Encoding: only 'chunked', alone");
  if (has_encoding && chunked != 1)
    return refuse(400, chunked ? "Transfer coding chunked given more than once"
                               : "Transfer-Encoding names no coding");
  f.chunked = chunked == 1;
  // RFC 9112 §3.2.
  if (!rl.http10 && hosts == 0)
    return refuse(400, "Missing Host header");
  if (hosts > 1)
    return refuse(400, "Host given more than once");
  return f;
}

head_facts check_head_start(std::string_view start, const head_limits& limits) {
  auto nl = start.find('\n');
  if (nl != std::string_view::npos) {
    auto rl = check_request_line(line_at(start, 0, nl));
    if (rl.facts.status)
      return rl.facts;
  } else {
    // A TLS handshake or other bytes that are no request line are refused
    // as soon as they arrive, not after the read timeout.
    auto method = start.substr(0, start.find(' '));
    for (unsigned char c : method)
      if (!token_chars[c])
        return refuse(400, "Malformed request line: the method is not a token");
  }
  if (start.size() > limits.max_bytes)
    return too_large(start, limits);
  return {};
}

int check_trailer_line(std::string_view text, std::string& message) {
  std::string_view name;
  std::string_view value;
  if (int status = check_field(text, message, name, value))
    return status;
  // RFC 9110 §6.5.1: framing and routing fields have no place in a trailer
  // (and the parser reads Content-Length and Transfer-Encoding there as in
  // the head, refusing what it does not like).
  bool framing =
      iequals(name, "content-length") || iequals(name, "host") ||
      iequals(name, "connection") || iequals(name, "upgrade") ||
      (name.size() >= 17 && iequals(name.substr(0, 17), "transfer-encoding"));
  if (framing) {
    message = "Trailer field " + core::excerpt(name) + " is not allowed";
    return 400;
  }
  return 0;
}

std::string_view head_field(std::string_view head, std::string_view name,
                            int& count) {
  std::string_view found;
  count = 0;
  std::size_t at = head.find('\n');
  while (at != std::string_view::npos && at + 1 < head.size()) {
    auto start = at + 1;
    auto end = head.find('\n', start);
    auto line = head.substr(start, end == std::string_view::npos
                                       ? std::string_view::npos
                                       : end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    auto colon = line.find(':');
    // lower() of this file, not core's: the gate's fuzz target links this
    // file alone.
    if (colon == name.size() &&
        std::equal(name.begin(), name.end(), line.begin(),
                   [](char a, char b) { return lower(a) == lower(b); })) {
      auto value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
      if (count++ == 0)
        found = value;
    }
    at = end;
  }
  return found;
}

} // namespace mailassay::http
