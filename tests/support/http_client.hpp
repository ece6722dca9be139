#pragma once

#include <map>
#include <string>
#include <vector>

namespace mailassay::testing {

/// A parsed HTTP response.
struct http_response {
  int status = 0;
  std::map<std::string, std::string> headers; ///< Lower-case names.
  std::string body;

  /// Returns a header value or "".
  std::string header(const std::string& lower_name) const;
};

/// Sends one HTTP/1.1 request to 127.0.0.1:`port` on a fresh connection and
/// reads the whole response. status 0 means the connection failed or closed
/// without an answer.
http_response http_request(
  int port, const std::string& method, const std::string& path,
  const std::vector<std::pair<std::string, std::string>>& headers = {},
  const std::string& body = "");

} // namespace mailassay::testing
