#pragma once

// The checks of text settings the registry's rows name: each returns why a
// value is refused, or "" when it is good.

#include <string>

namespace mailassay::config::keys {

/// sqlite:///absolute.db, sqlite://relative.db or postgresql://...
std::string check_database_url(const std::string& v);
/// A Unix-domain socket path (at most 107 characters).
std::string check_socket_path(const std::string& v);
/// A log level: trace, debug, info, warn, error or off.
std::string check_level(const std::string& v);
/// An HS256 secret of at least 32 characters, or nothing.
std::string check_secret(const std::string& v);
/// redis://... or nothing (the full parse runs at start-up).
std::string check_redis_url(const std::string& v);
/// A Redis key prefix: at most 64 visible ASCII characters.
std::string check_redis_prefix(const std::string& v);
/// A SOCKS5 proxy as ip:port or [v6]:port, or nothing.
std::string check_socks5(const std::string& v);
/// An IP address, or nothing.
std::string check_ip_or_empty(const std::string& v);
/// A 32-byte key as 64 hex digits, or nothing.
std::string check_hex_key(const std::string& v);
/// An absolute http(s) URL, or nothing.
std::string check_base_url(const std::string& v);

} // namespace mailassay::config::keys
