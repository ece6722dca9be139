#pragma once

#include <cstddef>
#include <cstdint>
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

/// Sends `bytes` as they are on a fresh connection to 127.0.0.1:`port` and
/// returns everything received until the server closes the connection,
/// `timeout_ms` pass without data, or `stop_after` bytes arrived (then the
/// client closes first), for pipelining, `Expect` and clients that leave.
/// `closed`, when given, tells whether the server closed the connection.
std::string raw_exchange(int port, const std::string& bytes,
                         int timeout_ms = 10000,
                         std::size_t stop_after = SIZE_MAX,
                         bool* closed = nullptr);

/// Encodes `body` with the chunked transfer coding, `chunk_size` bytes a
/// chunk (RFC 9112 §7.1).
std::string chunked(const std::string& body, std::size_t chunk_size = 65536);

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
