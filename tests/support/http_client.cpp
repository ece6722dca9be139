#include "tests/support/http_client.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace mailassay::testing {

std::string http_response::header(const std::string& lower_name) const {
  auto i = headers.find(lower_name);
  return i == headers.end() ? std::string{} : i->second;
}

namespace {

// Parses "HTTP/1.1 200 OK\r\nName: value\r\n..." up to (not including) the
// blank line.
void parse_head(const std::string& head, http_response& out) {
  out.status = std::atoi(head.c_str() + 9);
  size_t pos = head.find("\r\n");
  pos = pos == std::string::npos ? head.size() : pos + 2;
  while (pos < head.size()) {
    auto eol = head.find("\r\n", pos);
    if (eol == std::string::npos)
      eol = head.size();
    auto line = head.substr(pos, eol - pos);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (auto& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ')
        value.erase(0, 1);
      out.headers[name] = value;
    }
    pos = eol + 2;
  }
}

bool send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    auto n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// The request's bytes: a Content-Length unless the caller gave a length
// (or a chunked body, which carries its own).
std::string
request_text(const std::string& method, const std::string& path,
             const std::vector<std::pair<std::string, std::string>>& headers,
             const std::string& body, bool close) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (close)
    req += "Connection: close\r\n";
  bool has_length = false;
  for (auto& [k, v] : headers) {
    req += k + ": " + v + "\r\n";
    // A chunked body carries its own length.
    if (strcasecmp(k.c_str(), "Content-Length") == 0 ||
        strcasecmp(k.c_str(), "Transfer-Encoding") == 0)
      has_length = true;
  }
  if (!has_length && (!body.empty() || method == "POST" || method == "PATCH"))
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  return req;
}

// A socket connected to 127.0.0.1:`port` that gives up a read after a
// minute; -1 when it cannot connect.
int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

} // namespace

http_response
http_request(int port, const std::string& method, const std::string& path,
             const std::vector<std::pair<std::string, std::string>>& headers,
             const std::string& body) {
  http_response out;
  int fd = connect_loopback(port);
  if (fd < 0)
    return out;
  auto req = request_text(method, path, headers, body, true);
  send_all(fd, req);
  std::string raw;
  char buf[65536];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    raw.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  auto head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos)
    return out;
  parse_head(raw.substr(0, head_end), out);
  out.body = raw.substr(head_end + 4);
  if (out.header("transfer-encoding") == "chunked") {
    std::string decoded;
    size_t p = 0;
    while (p < out.body.size()) {
      auto eol = out.body.find("\r\n", p);
      auto size = std::stoul(out.body.substr(p, eol - p), nullptr, 16);
      if (size == 0)
        break;
      decoded += out.body.substr(eol + 2, size);
      p = eol + 2 + size + 2;
    }
    out.body = decoded;
  }
  return out;
}

std::string raw_exchange(int port, const std::string& bytes, int timeout_ms,
                         std::size_t stop_after, bool* closed) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return {};
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string raw;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send_all(fd, bytes)) {
    char buf[65536];
    while (raw.size() < stop_after) {
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed)
          *closed = n == 0;
        break;
      }
      raw.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return raw;
}

std::string chunked(const std::string& body, std::size_t chunk_size) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t p = 0; p < body.size(); p += chunk_size) {
    auto n = std::min(chunk_size, body.size() - p);
    std::string size;
    for (auto v = n; v > 0; v /= 16)
      size.insert(size.begin(), hex[v % 16]);
    out += size + "\r\n";
    out.append(body, p, n);
    out += "\r\n";
  }
  return out + "0\r\n\r\n";
}

} // namespace mailassay::testing

namespace mailassay::testing {

http_connection::http_connection(int port) : port_(port) {
  connect();
}

http_connection::~http_connection() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool http_connection::connect() {
  if (fd_ >= 0)
    ::close(fd_);
  buffer_.clear();
  fd_ = connect_loopback(port_);
  return fd_ >= 0;
}

bool http_connection::exchange(const std::string& raw_request,
                               http_response& out) {
  out = {};
  if (fd_ < 0 || !send_all(fd_, raw_request))
    return false;
  char buf[65536];
  auto fill = [&]() {
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0)
      return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  };
  size_t head_end;
  while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos)
    if (!fill())
      return false;
  if (buffer_.rfind("HTTP/1.", 0) != 0)
    return false;
  parse_head(buffer_.substr(0, head_end), out);
  buffer_.erase(0, head_end + 4);
  if (out.header("transfer-encoding") == "chunked") {
    for (;;) {
      size_t eol;
      while ((eol = buffer_.find("\r\n")) == std::string::npos)
        if (!fill())
          return false;
      auto size = std::stoul(buffer_.substr(0, eol), nullptr, 16);
      while (buffer_.size() < eol + 2 + size + 2)
        if (!fill())
          return false;
      out.body += buffer_.substr(eol + 2, size);
      buffer_.erase(0, eol + 2 + size + 2);
      if (size == 0)
        return true;
    }
  }
  auto length_text = out.header("content-length");
  size_t length = length_text.empty() ? 0 : std::stoul(length_text);
  while (buffer_.size() < length)
    if (!fill())
      return false;
  out.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return true;
}

http_response http_connection::request(
    const std::string& method, const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::string& body) {
  auto req = request_text(method, path, headers, body, false);
  http_response out;
  if (exchange(req, out))
    return out;
  // The server may have closed an idle connection: one fresh attempt.
  if (connect() && exchange(req, out))
    return out;
  return http_response{};
}

} // namespace mailassay::testing
