// `mailassay status`: the live pool gauges of a running server, read from
// its /metrics over plain HTTP and printed as tables for a terminal; with
// --health, only whether its /health answers 200 (the container image's
// HEALTHCHECK, which has no curl).
#include "app/app.hpp"
#include "net/blocking_socket.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <map>
#include <netdb.h>
#include <optional>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace mailassay::app {

namespace {

/// One series of the Prometheus text: name, labels as written, value.
struct sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Reads `k="v",k2="v2"` (values escaped as Prometheus writes them).
std::map<std::string, std::string> parse_labels(std::string_view s) {
  std::map<std::string, std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    auto eq = s.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= s.size() || s[eq + 1] != '"')
      break;
    std::string key{s.substr(i, eq - i)};
    std::string value;
    std::size_t j = eq + 2;
    for (; j < s.size() && s[j] != '"'; ++j) {
      if (s[j] == '\\' && j + 1 < s.size()) {
        ++j;
        value += s[j] == 'n' ? '\n' : s[j];
        continue;
      }
      value += s[j];
    }
    out.emplace(std::move(key), std::move(value));
    i = j + 1;
    if (i < s.size() && s[i] == ',')
      ++i;
  }
  return out;
}

std::vector<sample> parse_metrics(std::string_view text) {
  std::vector<sample> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line.front() == '#')
      continue;
    sample s;
    auto brace = line.find('{');
    auto space = line.rfind(' ');
    if (space == std::string_view::npos)
      continue;
    if (brace != std::string_view::npos && brace < space) {
      auto close = line.rfind('}', space);
      if (close == std::string_view::npos)
        continue;
      s.name = std::string{line.substr(0, brace)};
      s.labels = parse_labels(line.substr(brace + 1, close - brace - 1));
    } else {
      s.name = std::string{line.substr(0, space)};
    }
    auto v = line.substr(space + 1);
    if (v == "+Inf")
      s.value = 1e300;
    else if (std::from_chars(v.data(), v.data() + v.size(), s.value).ec !=
             std::errc{})
      continue;
    out.push_back(std::move(s));
  }
  return out;
}

// A blocking GET of `path` from host:port, at most `timeout_ms` in all;
// returns the body of a 200 answer, or sets `error`.
std::string http_get(const std::string& host, const std::string& port,
                     const std::string& path, int timeout_ms,
                     std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
      rc != 0) {
    error = std::string{"cannot resolve "} + host + ": " + ::gai_strerror(rc);
    return {};
  }
  int fd = -1;
  for (auto* a = res; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    error = "cannot connect to " + host + ":" + port +
            " (is `mailassay serve` running there?)";
    return {};
  }
  auto request =
      "GET " + path + " HTTP/1.1\r\nHost: " + host +
      "\r\nConnection: close\r\nUser-Agent: mailassay-status\r\n\r\n";
  if (!net::send_all(fd, request)) {
    ::close(fd);
    error = "the server closed the connection";
    return {};
  }
  auto received = net::read_to_end(fd, std::chrono::milliseconds(timeout_ms));
  ::close(fd);
  if (!received) {
    error = "no answer from " + host + ":" + port + " in time";
    return {};
  }
  const auto& answer = *received;
  auto head_end = answer.find("\r\n\r\n");
  if (answer.rfind("HTTP/1.1 200", 0) != 0 || head_end == std::string::npos) {
    error = "unexpected answer: " + answer.substr(0, answer.find("\r\n"));
    return {};
  }
  auto head = answer.substr(0, head_end);
  auto body = answer.substr(head_end + 4);
  // RESTinio answers with Content-Length; chunked bodies are decoded here
  // all the same.
  std::string lower;
  for (char c : head)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("transfer-encoding: chunked") != std::string::npos) {
    std::string plain;
    std::size_t i = 0;
    while (i < body.size()) {
      auto eol = body.find("\r\n", i);
      if (eol == std::string::npos)
        break;
      std::size_t len = 0;
      std::from_chars(body.data() + i, body.data() + eol, len, 16);
      if (len == 0)
        break;
      plain.append(body, eol + 2, len);
      i = eol + 2 + len + 2;
    }
    body = std::move(plain);
  }
  return body;
}

std::string number(double v) {
  if (v >= 1e300)
    return "+Inf";
  char buf[64];
  if (v == static_cast<double>(static_cast<long long>(v)))
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Prints rows as a table: the first row is the header, columns padded to
// their widest cell, numbers right-aligned.
void print_table(std::ostream& out,
                 const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty())
    return;
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size() && i < width.size(); ++i) {
      auto pad = std::string(width[i] - rows[k][i].size(), ' ');
      if (i > 0)
        line += "  ";
      line += i == 0 ? rows[k][i] + pad : pad + rows[k][i];
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << "\n";
    if (k == 0) {
      std::string rule;
      for (std::size_t i = 0; i < width.size(); ++i)
        rule += (i > 0 ? "  " : "") + std::string(width[i], '-');
      out << rule << "\n";
    }
  }
}

// host:port from `url` (http://host:port), else the configured listener;
// false (after saying why) for a URL this command cannot read.
bool server_address(const config::settings& cfg, const std::string& url,
                    std::string& host, std::string& port) {
  host = cfg.http.address == "0.0.0.0" || cfg.http.address == "::"
             ? "127.0.0.1"
             : cfg.http.address;
  port = std::to_string(cfg.http.port);
  if (!url.empty()) {
    std::string_view u = url;
    if (u.rfind("http://", 0) == 0)
      u.remove_prefix(7);
    else if (u.find("://") != std::string_view::npos) {
      std::cerr << "mailassay: status reads http:// URLs only (run it on the "
                   "server's machine, behind any TLS proxy)\n";
      return false;
    }
    if (auto slash = u.find('/'); slash != std::string_view::npos)
      u = u.substr(0, slash);
    auto colon = u.rfind(':');
    if (!u.empty() && u.front() == '[') {
      auto close = u.find(']');
      host = std::string{u.substr(1, close - 1)};
      port = close + 1 < u.size() && u[close + 1] == ':'
                 ? std::string{u.substr(close + 2)}
                 : "80";
    } else if (colon != std::string_view::npos) {
      host = std::string{u.substr(0, colon)};
      port = std::string{u.substr(colon + 1)};
    } else {
      host = std::string{u};
      port = "80";
    }
  }
  return true;
}

} // namespace

int status(const config::settings& cfg, const std::string& url, bool health) {
  std::string host, port;
  if (!server_address(cfg, url, host, port))
    return 2;
  std::string error;
  if (health) {
    // A health probe must answer well within the probe's own time-out.
    auto body = http_get(host, port, "/health", 3000, error);
    if (!error.empty()) {
      std::cerr << "mailassay: status --health: " << error << "\n";
      return 1;
    }
    std::cout << body << "\n";
    return 0;
  }
  auto text = http_get(host, port, "/metrics", 5000, error);
  if (!error.empty()) {
    std::cerr << "mailassay: status: " << error << "\n";
    return 1;
  }
  auto samples = parse_metrics(text);
  auto value = [&](std::string_view name,
                   const std::map<std::string, std::string>& labels = {})
      -> std::optional<double> {
    for (auto& s : samples)
      if (s.name == name && s.labels == labels)
        return s.value;
    return std::nullopt;
  };
  auto shown = [&](std::string_view name,
                   const std::map<std::string, std::string>& labels = {}) {
    auto v = value(name, labels);
    return v ? number(*v) : std::string{"-"};
  };
  auto& out = std::cout;
  out << "mailassay status: http://" << host << ":" << port << "/metrics\n\n";

  // Actor pools, in the order they appear.
  std::vector<std::vector<std::string>> pools{
      {"pool", "workers", "queued", "busy", "done"}};
  for (auto& s : samples)
    if (s.name == "mailassay_pool_workers") {
      auto p = s.labels.count("pool") ? s.labels.at("pool") : std::string{};
      std::map<std::string, std::string> l{{"pool", p}};
      pools.push_back({p, number(s.value), shown("mailassay_pool_queued", l),
                       shown("mailassay_pool_busy", l),
                       shown("mailassay_pool_done", l)});
    }
  print_table(out, pools);
  out << "\n";

  std::vector<std::vector<std::string>> gauges{{"gauge", "value"}};
  auto row = [&](std::string label, std::string_view name,
                 const std::map<std::string, std::string>& labels = {}) {
    if (value(name, labels))
      gauges.push_back({std::move(label), shown(name, labels)});
  };
  row("HTTP requests in flight", "mailassay_http_in_flight");
  row("DNS queries in flight", "mailassay_dns_in_flight");
  row("DNS queries waiting for a slot", "mailassay_dns_queued");
  row("SMTP addresses asked, not answered", "mailassay_smtp_probes_active");
  row("SMTP addresses waiting (slot or retry)", "mailassay_smtp_queued");
  row("SMTP sessions since start", "mailassay_smtp_sessions");
  row("Batch jobs running", "mailassay_batch_running_jobs");
  row("Batch validations running", "mailassay_batch_in_flight");
  row("Batch paced waits", "mailassay_batch_paced_waits");
  row("Usage counts waiting to be written", "mailassay_usage_pending");
  print_table(out, gauges);

  // SMTP sessions per MX host (only hosts the server has used).
  std::vector<std::vector<std::string>> hosts{
      {"MX host", "sessions open", "peak", "connections opened"}};
  for (auto& s : samples)
    if (s.name == "mailassay_smtp_host_sessions_open") {
      auto h = s.labels.count("host") ? s.labels.at("host") : std::string{};
      std::map<std::string, std::string> l{{"host", h}};
      hosts.push_back({h, number(s.value),
                       shown("mailassay_smtp_host_sessions_peak", l),
                       shown("mailassay_smtp_host_connections_opened", l)});
    }
  if (hosts.size() > 1) {
    out << "\n";
    print_table(out, hosts);
  }
  return 0;
}

} // namespace mailassay::app
