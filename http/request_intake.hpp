#pragma once

// Reading a request RESTinio parsed into the request_view handlers see: its
// path, headers and client address, its request id, its query (http/server.cpp
// calls these on the request's loop).

#include "http/exchange.hpp"
#include "http/services.hpp"

#include <restinio/all.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::http {

/// Whether a client's X-Request-Id can be echoed and logged as it is: 1-64
/// characters of letters, digits and `-_.:+/=@` (UUIDs, hex, base64, ULIDs,
/// "req_..." all fit), so it can never carry markup, quotes or a field
/// separator into a log line or a page (else the request gets a fresh id).
bool usable_request_id(std::string_view id);

/// The dotted quad of an IPv4 address, as inet_ntop writes it (and
/// core::limits::to_string, so it is also the canonical client IP), without
/// inet_ntop's sprintf.
std::string dotted_quad(const asio::ip::address_v4& a);

/// Fills `v` in place with views into `req` (the exchange keeps it), with
/// room for every header reserved up front. Returns whether the body gate
/// refused the request's body (its marker is a header, or a trailer of a
/// chunked body).
bool fill_view(request_view& v, const restinio::request_handle_t& req,
               const services& svc);

/// Reads the query string of a route that reads one (route::query) into
/// `v.args`: 400 when it cannot be read, 422 for a parameter the route does
/// not read or one given twice. Checked with the route, before credentials,
/// like 404 and 405: the names an endpoint reads are public (OpenAPI); bad
/// values of known parameters are the handler's, after authentication.
std::optional<core::error> read_query(request_view& v, const char* allowed);

} // namespace mailassay::http
