#include "tests/support/http_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstring>

namespace mailassay::testing {

std::string http_response::header(const std::string& lower_name) const {
  auto i = headers.find(lower_name);
  return i == headers.end() ? std::string{} : i->second;
}

namespace {

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

} // namespace

http_response
http_request(int port, const std::string& method, const std::string& path,
             const std::vector<std::pair<std::string, std::string>>& headers,
             const std::string& body) {
  http_response out;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return out;
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return out;
  }
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Connection: close\r\n";
  bool has_length = false;
  for (auto& [k, v] : headers) {
    req += k + ": " + v + "\r\n";
    if (strcasecmp(k.c_str(), "Content-Length") == 0)
      has_length = true;
  }
  if (!has_length && (!body.empty() || method == "POST" || method == "PATCH"))
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
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
  out.status = std::atoi(raw.c_str() + 9);
  size_t pos = raw.find("\r\n") + 2;
  while (pos < head_end) {
    auto eol = raw.find("\r\n", pos);
    auto line = raw.substr(pos, eol - pos);
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

} // namespace mailassay::testing
