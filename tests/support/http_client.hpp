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

/// One keep-alive HTTP/1.1 connection to 127.0.0.1:`port`: requests go
/// one after another over the same socket (for tests that send many).
class http_connection {
public:
  /// Connects (again on the first request if this fails).
  explicit http_connection(int port);
  ~http_connection();
  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  /// Sends one request and reads its response (Content-Length or chunked
  /// body); reconnects once when the server had closed the connection.
  /// status 0 means no answer.
  http_response
  request(const std::string& method, const std::string& path,
          const std::vector<std::pair<std::string, std::string>>& headers = {},
          const std::string& body = "");

private:
  bool connect();
  bool exchange(const std::string& raw_request, http_response& out);
  int port_;
  int fd_ = -1;
  std::string buffer_; // bytes read past the previous response
};

} // namespace mailassay::testing
