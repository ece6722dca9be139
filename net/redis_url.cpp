#include "net/redis_url.hpp"

#include "core/base/percent.hpp"

#include <charconv>
#include <optional>
#include <string_view>

namespace mailassay::net {

namespace {

core::error bad(std::string_view why) {
  return core::make_error(core::errc::bad_request,
                          "invalid Redis URL: " + std::string{why});
}

std::optional<int> number(std::string_view text, int max) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() ||
      n < 0 || n > max)
    return std::nullopt;
  return n;
}

} // namespace

core::expected<redis_endpoint> parse_redis_url(const std::string& url) {
  constexpr std::string_view scheme = "redis://";
  std::string_view rest = url;
  if (rest.substr(0, scheme.size()) != scheme)
    return bad("expected redis://[[user]:password@]host[:port][/db]");
  rest.remove_prefix(scheme.size());
  redis_endpoint e;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    auto db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty()) {
      auto n = number(db, 1 << 20);
      if (!n)
        return bad("the database after / must be a number");
      e.db = *n;
    }
  }
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    auto login = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = login.find(':');
    auto user = core::percent_decode(login.substr(0, colon));
    auto password = core::percent_decode(colon == std::string_view::npos
                                             ? std::string_view{}
                                             : login.substr(colon + 1));
    if (!user || !password)
      return bad("bad percent-encoding in the user or password");
    // redis://secret@host is the old password-only form.
    if (colon == std::string_view::npos)
      std::swap(*user, *password);
    e.user = std::move(*user);
    e.password = std::move(*password);
  }
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos)
      return bad("unclosed [ of an IPv6 address");
    e.host = std::string{rest.substr(1, close - 1)};
    auto after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return bad("expected :port after ]");
      port = after.substr(1);
    }
  } else {
    auto colon = rest.rfind(':');
    e.host = std::string{rest.substr(0, colon)};
    if (colon != std::string_view::npos)
      port = rest.substr(colon + 1);
  }
  if (e.host.empty())
    return bad("no host");
  if (!port.empty() || rest.back() == ':') {
    auto n = number(port, 65535);
    if (!n || *n == 0)
      return bad("the port must be a number from 1 to 65535");
    e.port = *n;
  }
  return e;
}

std::string describe(const redis_endpoint& e) {
  std::string out = "redis://";
  if (!e.user.empty() || !e.password.empty()) {
    out += e.user;
    out += e.password.empty() ? "@" : ":***@";
  }
  if (e.host.find(':') != std::string::npos) {
    out += '[';
    out += e.host;
    out += ']';
  } else {
    out += e.host;
  }
  out += ':';
  out += std::to_string(e.port);
  out += '/';
  out += std::to_string(e.db);
  return out;
}

} // namespace mailassay::net
