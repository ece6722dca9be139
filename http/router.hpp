#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "http/exchange.hpp"

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

/// One endpoint: method, path pattern (`:name` segments bind parameters),
/// the largest body it accepts, and its handler.
struct route {
  const char* method;
  const char* pattern;
  handler fn;
  std::int64_t max_body = 0; ///< 0: the configured JSON limit.
};

/// The table of every endpoint (http/routes.cpp).
const std::vector<route>& routes();

/// The outcome of matching a request against the table.
struct route_match {
  const route* found = nullptr;           ///< Method and path match.
  std::map<std::string, std::string> params;
  std::string allow; ///< Methods of the path when only the method differs.
};

/// Finds the route of `method` + `path`.
route_match match_route(std::string_view method, std::string_view path);

} // namespace mailassay::http
