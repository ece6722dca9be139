#pragma once

#include "http/exchange.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::http {

struct services;

/// What a handler gets: the exchange to answer and the services.
struct call {
  exchange_ptr ex;
  services* svc;
  const request_view& req() const { return ex->request(); }
};

/// A handler answers now or later, exactly once, through `c.ex`.
using handler = void (*)(call c);

/// A route's `query` that reads no query string at all: pages and static
/// assets, whose links carry cache-busting and tracking parameters.
inline constexpr const char* any_query = nullptr;

/// What the server treats apart in a route, beyond its handler.
enum class route_traits : unsigned char {
  none,
  /// Answers a CORS preflight: the one route pages on other sites call
  /// (the widget's).
  cross_origin,
  /// Takes a file (batch.max_file_bytes): a body the gate refused is
  /// answered with the file's limit.
  file_upload,
};

/// One endpoint: method, path pattern (`:name` segments bind parameters),
/// its handler, the query parameters it reads, and the largest body it
/// accepts.
struct route {
  const char* method;
  const char* pattern;
  handler fn;
  /// The query parameters the endpoint reads, separated by commas; any
  /// other (or one given twice) is refused with 422, an unreadable query
  /// with 400 (http/query.hpp). "": none. `any_query`: not read.
  const char* query = "";
  std::int64_t max_body = 0; ///< 0: the configured JSON limit.
  route_traits traits = route_traits::none;
};

/// The table of every endpoint (http/routes.cpp).
const std::vector<route>& routes();

/// The outcome of matching a request against the table.
struct route_match {
  const route* found = nullptr; ///< Method and path match.
  std::map<std::string, std::string> params;
  std::string allow; ///< Methods of the path when only the method differs.
};

/// Finds the route of `method` + `path`; HEAD finds the GET route of the
/// path (RFC 9110 §9.3.2), and `allow` names HEAD wherever GET is.
route_match match_route(std::string_view method, std::string_view path);

} // namespace mailassay::http
