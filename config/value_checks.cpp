#include "config/value_checks.hpp"

#include "core/limits/client_ip.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace mailassay::config::keys {

std::string check_database_url(const std::string& v) {
  if (v.rfind("sqlite://", 0) == 0 && v.size() > 9)
    return {};
  if (v.rfind("postgresql://", 0) == 0 || v.rfind("postgres://", 0) == 0)
    return {};
  return "expected sqlite:///absolute/path.db, sqlite://relative/path.db or "
         "postgresql://user:password@host:port/dbname, got \"" +
         v + "\"";
}

// sockaddr_un holds 108 bytes with the terminating NUL.
std::string check_socket_path(const std::string& v) {
  if (v.size() > 107)
    return "must be at most 107 characters (a Unix socket path)";
  return {};
}

std::string check_level(const std::string& v) {
  for (auto l : {"trace", "debug", "info", "warn", "error", "off"})
    if (v == l)
      return {};
  return "expected one of trace, debug, info, warn, error, off";
}

std::string check_secret(const std::string& v) {
  if (!v.empty() && v.size() < 32)
    return "must be at least 32 characters (or unset to generate one)";
  return {};
}

// The full parse (host, port, db) runs at start-up (app/serve.cpp).
std::string check_redis_url(const std::string& v) {
  if (v.empty() || (v.rfind("redis://", 0) == 0 && v.size() > 8))
    return {};
  return "expected redis://[[user]:password@]host[:port][/db] or nothing";
}

std::string check_redis_prefix(const std::string& v) {
  if (v.size() > 64)
    return "must be at most 64 characters";
  for (unsigned char c : v)
    if (c <= 0x20 || c >= 0x7f)
      return "must be visible ASCII characters";
  return {};
}

// "ip:port" or "[v6]:port": the proxy is reached without any resolver.
std::string check_socks5(const std::string& v) {
  if (v.empty())
    return {};
  auto colon = v.rfind(':');
  auto host = colon == std::string::npos ? v : v.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  auto rest = colon == std::string::npos ? std::string{} : v.substr(colon + 1);
  auto [ptr, ec] =
      std::from_chars(rest.data(), rest.data() + rest.size(), port);
  if (!core::limits::parse_ip(host) || rest.empty() || ec != std::errc{} ||
      ptr != rest.data() + rest.size() || port == 0 || port > 65535)
    return "expected ip:port or [v6]:port (an IP address, no host name), "
           "got \"" +
           v + "\"";
  return {};
}

std::string check_ip_or_empty(const std::string& v) {
  if (v.empty() || core::limits::parse_ip(v))
    return {};
  return "expected an IP address (or nothing), got \"" + v + "\"";
}

std::string check_hex_key(const std::string& v) {
  if (v.empty())
    return {};
  if (v.size() != 64 || !std::all_of(v.begin(), v.end(), [](unsigned char c) {
        return std::isxdigit(c) != 0;
      }))
    return "must be 64 hex digits (32 bytes), or unset to generate one";
  return {};
}

std::string check_base_url(const std::string& v) {
  if (v.empty() || v.rfind("https://", 0) == 0 || v.rfind("http://", 0) == 0)
    return {};
  return "expected an absolute http(s) URL such as https://mail.example.com";
}

} // namespace mailassay::config::keys
