// A closed-loop HTTP/1.1 load generator for bench/overload_bench.sh: N
// keep-alive connections, each sending the same request again as soon as
// its answer arrived, for a duration; reports the answers by status with
// the latency percentiles of each (wrk reports one distribution for every
// answer, and the overload benchmark needs the 200s' apart from the 503s').
//
//   load_client --port P --connections N --seconds S --path /v2/... \
//               [--header "Name: value"]... [--body TEXT] [--threads T]
//
// A `{n}` in the body becomes a number unique to each request (a domain
// never looked up before, say).
// Prints one JSON object: {"seconds", "connect_errors", "socket_errors",
// "statuses": {"200": {"count", "p50_ms", "p99_ms", "max_ms"}, ...},
// "retry_after": count of 503s carrying Retry-After}.
#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
  int port = 0;
  int connections = 64;
  double seconds = 10;
  int threads = 1;
  std::string path = "/";
  std::string body;
  std::vector<std::string> headers;
};

// What one thread saw.
struct tally {
  std::map<int, std::vector<double>> latencies_ms; // by status
  std::size_t retry_after = 0;
  std::size_t connect_errors = 0;
  std::size_t socket_errors = 0;
};

struct connection {
  int fd = -1;
  std::string req;
  std::string in;
  std::size_t sent = 0;
  clock_type::time_point started;
};

// The request's text; `{n}` in the body replaced by `n`.
std::string request_text(const options& o, std::uint64_t n) {
  auto body = o.body;
  if (auto at = body.find("{n}"); at != std::string::npos)
    body.replace(at, 3, std::to_string(n));
  std::string r = (o.body.empty() ? "GET " : "POST ") + o.path +
                  " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& h : o.headers)
    r += h + "\r\n";
  if (!body.empty())
    r += "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n";
  r += "\r\n" + body;
  return r;
}

// Numbers of `{n}`, unique across threads.
std::atomic<std::uint64_t> next_n{0};

int open_connection(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Case-insensitive search for a header name at a line start of `head`.
std::size_t find_field(const std::string& head, const char* name) {
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower.find(std::string{"\r\n"} + name + ":");
}

// One whole answer at the front of `in`: its length (0: not whole yet),
// its status, and whether it carries Retry-After.
std::size_t whole_answer(const std::string& in, int& status, bool& retry) {
  auto end = in.find("\r\n\r\n");
  if (end == std::string::npos)
    return 0;
  auto head = in.substr(0, end + 2);
  status = std::atoi(head.c_str() + 9);
  std::size_t length = 0;
  if (auto at = find_field(head, "content-length"); at != std::string::npos)
    length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
  retry = find_field(head, "retry-after") != std::string::npos;
  auto total = end + 4 + length;
  return in.size() >= total ? total : 0;
}

bool send_some(connection& c, const std::string& req) {
  while (c.sent < req.size()) {
    auto n =
        ::send(c.fd, req.data() + c.sent, req.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0)
      return errno == EAGAIN;
    c.sent += static_cast<std::size_t>(n);
  }
  return true;
}

void run(const options& o, int connections, clock_type::time_point until,
         tally& t) {
  bool unique = o.body.find("{n}") != std::string::npos;
  auto fixed = request_text(o, 0);
  auto next_request = [&] {
    return unique ? request_text(o, ++next_n) : fixed;
  };
  int ep = ::epoll_create1(0);
  std::vector<connection> conns(static_cast<std::size_t>(connections));
  for (std::size_t i = 0; i < conns.size(); ++i) {
    auto& c = conns[i];
    c.fd = open_connection(o.port);
    if (c.fd < 0) {
      ++t.connect_errors;
      continue;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = i;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    c.started = clock_type::now();
    c.req = next_request();
    send_some(c, c.req);
  }
  std::vector<epoll_event> events(1024);
  char buf[65536];
  while (clock_type::now() < until) {
    int n =
        ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 50);
    for (int k = 0; k < n; ++k) {
      auto& c = conns[events[k].data.u64];
      if (c.fd < 0)
        continue;
      if ((events[k].events & EPOLLOUT) && c.sent < c.req.size() &&
          !send_some(c, c.req)) {
        ++t.socket_errors;
        ::close(c.fd);
        c.fd = -1;
        continue;
      }
      if (!(events[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        continue;
      bool broken = false;
      for (;;) {
        auto got = ::recv(c.fd, buf, sizeof buf, 0);
        if (got > 0) {
          c.in.append(buf, static_cast<std::size_t>(got));
          continue;
        }
        broken = got == 0 || errno != EAGAIN;
        break;
      }
      int status = 0;
      bool retry = false;
      while (auto len = whole_answer(c.in, status, retry)) {
        auto now = clock_type::now();
        t.latencies_ms[status].push_back(
            std::chrono::duration<double, std::milli>(now - c.started).count());
        if (retry && status == 503)
          ++t.retry_after;
        c.in.erase(0, len);
        c.sent = 0;
        c.started = now;
        c.req = next_request();
        if (now < until && !send_some(c, c.req))
          broken = true;
      }
      if (broken) {
        ++t.socket_errors;
        ::close(c.fd);
        c.fd = -1;
      }
    }
  }
  for (auto& c : conns)
    if (c.fd >= 0)
      ::close(c.fd);
  ::close(ep);
}

double percentile(std::vector<double>& v, double p) {
  if (v.empty())
    return 0;
  auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

} // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--port")
      o.port = std::atoi(v.c_str());
    else if (k == "--connections")
      o.connections = std::atoi(v.c_str());
    else if (k == "--seconds")
      o.seconds = std::atof(v.c_str());
    else if (k == "--threads")
      o.threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--path")
      o.path = v;
    else if (k == "--body")
      o.body = v;
    else if (k == "--header")
      o.headers.push_back(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (o.port == 0) {
    std::fprintf(stderr, "--port is required\n");
    return 2;
  }
  auto started = clock_type::now();
  auto until = started + std::chrono::duration_cast<clock_type::duration>(
                             std::chrono::duration<double>(o.seconds));
  std::vector<tally> tallies(static_cast<std::size_t>(o.threads));
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads; ++i) {
    int share = o.connections / o.threads + (i < o.connections % o.threads);
    threads.emplace_back([&, i, share] {
      run(o, share, until, tallies[static_cast<std::size_t>(i)]);
    });
  }
  for (auto& t : threads)
    t.join();
  double took =
      std::chrono::duration<double>(clock_type::now() - started).count();
  tally all;
  for (auto& t : tallies) {
    for (auto& [status, v] : t.latencies_ms)
      all.latencies_ms[status].insert(all.latencies_ms[status].end(), v.begin(),
                                      v.end());
    all.retry_after += t.retry_after;
    all.connect_errors += t.connect_errors;
    all.socket_errors += t.socket_errors;
  }
  std::printf("{\"seconds\": %.3f, \"connect_errors\": %zu, "
              "\"socket_errors\": %zu, \"retry_after\": %zu, \"statuses\": {",
              took, all.connect_errors, all.socket_errors, all.retry_after);
  bool first = true;
  for (auto& [status, v] : all.latencies_ms) {
    auto n = v.size();
    double max = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    double p50 = percentile(v, 0.5);
    double p99 = percentile(v, 0.99);
    std::printf("%s\"%d\": {\"count\": %zu, \"p50_ms\": %.3f, \"p99_ms\": "
                "%.3f, \"max_ms\": %.3f}",
                first ? "" : ", ", status, n, p50, p99, max);
    first = false;
  }
  std::printf("}}\n");
  return 0;
}
