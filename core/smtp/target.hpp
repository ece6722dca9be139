#pragma once

// Where a probing session goes and what the driver reports back about it:
// the vocabulary shared by the route plan (core/smtp/route_plan.hpp), the
// SMTP client (net/smtp_client.hpp) and the scheduler.

#include "core/smtp/session.hpp"

#include <string>
#include <string_view>

namespace mailassay::core::smtp {

/// One place to connect to: an MX host name and one of its addresses.
struct probe_target {
  /// MX host name (the domain itself for an implicit MX), lower-case.
  std::string host;
  /// IP address in text form.
  std::string address;
};

/// Why no SMTP dialogue took place on a target.
enum class connect_failure {
  none,        ///< Connected: the session result tells the rest.
  refused,     ///< Connection refused.
  timeout,     ///< No connection within the step time-out.
  unreachable, ///< No route to the network or host.
  blocked,     ///< The address policy refused the address: never connected.
  proxy,       ///< The SOCKS5 proxy failed or refused the connection.
  other,       ///< Any other socket error, or the client is shutting down.
};

/// Returns the lower-case name of `f`, e.g. "refused".
std::string_view to_string(connect_failure f);

/// What one session on a target yielded, as the driver reports it.
struct session_report {
  /// Why there was no dialogue; `none` when there was one.
  connect_failure transport = connect_failure::none;
  /// Socket or proxy error text, for logs.
  std::string detail;
  /// The session's result; meaningful when `transport == none`.
  session_result result;
};

} // namespace mailassay::core::smtp
