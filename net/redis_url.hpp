#pragma once

#include "core/base/expected.hpp"

#include <string>

namespace mailassay::net {

/// Where a Redis server is and how to log in.
struct redis_endpoint {
  std::string host; ///< Name or IP (brackets of an IPv6 literal removed).
  int port = 6379;
  std::string user;     ///< ACL user (Redis 6+); empty: the default user.
  std::string password; ///< Empty: no AUTH.
  int db = 0;           ///< SELECTed after connecting.
};

/// Parses `redis://[[user]:password@]host[:port][/db]` (`[v6]` for IPv6
/// literals; user and password percent-decoded). Anything else ->
/// errc::bad_request with a message saying what is wrong.
core::expected<redis_endpoint> parse_redis_url(const std::string& url);

/// Returns `e` as a URL without its password, for logs and messages.
std::string describe(const redis_endpoint& e);

} // namespace mailassay::net
