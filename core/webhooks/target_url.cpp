#include "core/webhooks/target_url.hpp"

#include "core/base/ascii.hpp"
#include "core/limits/client_ip.hpp"

#include <algorithm>
#include <charconv>

namespace mailassay::core::webhooks {

namespace {

error invalid(std::string message) {
  auto e = make_error(errc::validation_failed, "");
  e.details = {std::move(message)};
  return e;
}

bool is_name_char(char c) {
  return is_ascii_lower(c) || is_ascii_digit(c) || c == '-' || c == '.';
}

// A host name after RFC 1123 §2.1: labels of letters, digits and hyphens,
// 1-63 bytes, not starting or ending with a hyphen; 253 bytes at most.
bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 253)
    return false;
  if (!std::all_of(name.begin(), name.end(), is_name_char))
    return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    auto dot = name.find('.', start);
    auto label = name.substr(start, dot == std::string_view::npos
                                        ? std::string_view::npos
                                        : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' ||
        label.back() == '-')
      return false;
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  return true;
}

// WHATWG URL treats a host whose last label is a number as IPv4 ("127.1",
// "0x7f.1", "2130706433"); resolvers and libraries disagree on such
// spellings, so they are refused instead of guessed.
bool numeric_last_label(std::string_view name) {
  auto dot = name.rfind('.');
  auto last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (last.empty())
    return false;
  if (last.starts_with("0x"))
    return true;
  return std::all_of(last.begin(), last.end(), is_ascii_digit);
}

bool is_localhost(std::string_view host) {
  return host == "localhost" || host.ends_with(".localhost");
}

} // namespace

std::string target_url::host_header() const {
  std::string out;
  if (host.find(':') != std::string::npos)
    out.append("[").append(host).append("]");
  else
    out = host;
  if (port != (tls ? 443 : 80))
    out.append(":").append(std::to_string(port));
  return out;
}

expected<target_url> parse_target_url(std::string_view url) {
  if (url.empty())
    return invalid("url must not be empty");
  if (url.size() > max_url_bytes)
    return invalid("url must be at most " + std::to_string(max_url_bytes) +
                   " bytes long");
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7f)
      return invalid("url must be ASCII without spaces or control "
                     "characters (percent-encode the rest)");
  target_url out;
  auto colon = url.find("://");
  if (colon == std::string_view::npos)
    return invalid("url must be an absolute http or https URL");
  auto scheme = ascii_lower(std::string{url.substr(0, colon)});
  if (scheme == "https")
    out.tls = true;
  else if (scheme == "http")
    out.tls = false;
  else
    return invalid("url must be an absolute http or https URL");
  auto rest = url.substr(colon + 3);
  if (rest.find('#') != std::string_view::npos)
    return invalid("url must not have a fragment");
  auto end = rest.find_first_of("/?");
  auto authority = rest.substr(0, end);
  auto tail =
      end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (authority.find('@') != std::string_view::npos)
    return invalid("url must not contain credentials");
  std::string_view host, port;
  if (authority.starts_with('[')) {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return invalid("url has an unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return invalid("url has a malformed host");
      port = after.substr(1);
      if (port.empty())
        return invalid("url has an empty port");
    }
    auto ip = limits::parse_ip(host);
    if (!ip || host.find(':') == std::string_view::npos)
      return invalid("url has a malformed IPv6 address");
    // An IPv4-mapped address keeps its IPv6 spelling, which the policy
    // classifies as reserved.
    out.host = ip->v4 ? ascii_lower(std::string{host}) : limits::to_string(*ip);
    out.host_is_ip = true;
  } else {
    auto pc = authority.rfind(':');
    host = authority.substr(0, pc);
    if (pc != std::string_view::npos) {
      port = authority.substr(pc + 1);
      if (port.empty())
        return invalid("url has an empty port");
    }
    if (host.empty())
      return invalid("url must name a host");
    std::string name = ascii_lower(std::string{host});
    if (name.size() > 1 && name.back() == '.')
      name.pop_back();
    if (auto ip = limits::parse_ip(name); ip && ip->v4) {
      out.host = limits::to_string(*ip);
      out.host_is_ip = true;
    } else if (!valid_name(name) || numeric_last_label(name)) {
      return invalid("url host must be a DNS name or an IP address");
    } else {
      out.host = std::move(name);
    }
  }
  out.port = out.tls ? 443 : 80;
  if (!port.empty()) {
    unsigned n = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (ec != std::errc{} || p != port.data() + port.size() || n == 0 ||
        n > 65535)
      return invalid("url port must be between 1 and 65535");
    out.port = static_cast<std::uint16_t>(n);
  }
  out.target = tail.empty() ? "/" : std::string{tail};
  if (out.target.front() == '?')
    out.target.insert(out.target.begin(), '/');
  return out;
}

std::optional<std::string> refusal(const target_url& url, bool allow_http,
                                   const smtp::target_policy& policy) {
  if (!url.tls && !allow_http)
    return "url must use https";
  std::string address = url.host_is_ip           ? url.host
                        : is_localhost(url.host) ? std::string{"127.0.0.1"}
                                                 : std::string{};
  if (address.empty())
    return std::nullopt;
  auto d = policy.check(address);
  if (d.allowed)
    return std::nullopt;
  return "url must not point at a " + std::string{smtp::to_string(d.kind)} +
         " address (" + url.host +
         "); the operator may allow networks with "
         "MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS";
}

std::optional<std::string>
port_refusal(const target_url& url, bool allow_http,
             std::span<const std::int64_t> allowed_ports, bool any_port) {
  if (any_port || url.port == 443 || (allow_http && url.port == 80))
    return std::nullopt;
  for (auto p : allowed_ports)
    if (p == url.port)
      return std::nullopt;
  return "url must use port 443" + std::string{allow_http ? " or 80" : ""} +
         " (got " + std::to_string(url.port) +
         "); the operator may allow others with "
         "MAILASSAY_WEBHOOKS_ALLOWED_PORTS";
}

} // namespace mailassay::core::webhooks
