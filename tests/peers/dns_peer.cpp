#include "tests/peers/dns_peer.hpp"

#include "tests/peers/script.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mailassay::tests::peers {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::uint16_t rcode_formerr = 1;
constexpr std::uint16_t rcode_servfail = 2;
constexpr std::uint16_t rcode_nxdomain = 3;
constexpr std::uint16_t rcode_notimp = 4;
constexpr std::uint16_t rcode_refused = 5;
constexpr std::size_t max_cname_links = 8;

std::string normalize(std::string_view name) {
  while (name.size() > 1 && name.back() == '.')
    name.remove_suffix(1);
  std::string out{name};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string upper(std::string s) {
  for (auto& c : s)
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  return s;
}

void put16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

void put32(std::string& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xffff));
}

void put_name(std::string& out, std::string_view name) {
  name = name == "." ? std::string_view{} : name;
  while (!name.empty()) {
    auto dot = name.find('.');
    auto label = name.substr(0, dot);
    out.push_back(static_cast<char>(std::min<std::size_t>(label.size(), 63)));
    out.append(label.substr(0, 63));
    name = dot == std::string_view::npos ? std::string_view{}
                                         : name.substr(dot + 1);
  }
  out.push_back('\0');
}

void put_rr(std::string& out, std::string_view owner, dns_type type,
            std::uint32_t ttl, const std::string& rdata) {
  put_name(out, owner);
  put16(out, static_cast<std::uint16_t>(type));
  put16(out, 1); // class IN
  put32(out, ttl);
  put16(out, static_cast<std::uint16_t>(rdata.size()));
  out.append(rdata);
}

std::uint16_t get16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

bool valid_ip(int family, const std::string& text) {
  unsigned char buf[16];
  return inet_pton(family, text.c_str(), buf) == 1;
}

// One answer ready to go, possibly after a delay.
struct reply {
  std::string bytes;
  std::chrono::milliseconds delay{0};
};

} // namespace

std::vector<std::pair<std::string, dns_entry>>
parse_dns_zone(std::string_view text) {
  std::vector<std::pair<std::string, dns_entry>> out;
  std::map<std::string, std::size_t> index;
  for_each_script_line(text, "zone", [&](const script_line& line) {
    const auto& tok = line.words;
    auto fail = [&](const std::string& why) { line.fail(why); };
    auto number = [&](const std::string& s, std::uint64_t max) {
      return line.decimal(s, 10, max);
    };
    auto name = normalize(tok[0]);
    auto [it, added] = index.try_emplace(name, out.size());
    if (added)
      out.emplace_back(name, dns_entry{});
    auto& e = out[it->second].second;
    std::size_t i = 1;
    if (i < tok.size() && std::isdigit(static_cast<unsigned char>(tok[i][0])))
      e.ttl = static_cast<std::uint32_t>(number(tok[i++], 0x7fffffff));
    if (i >= tok.size())
      fail("missing type");
    auto type = upper(tok[i++]);
    auto args = tok.size() - i;
    auto need = [&](std::size_t lo, std::size_t hi) {
      if (args < lo || args > hi)
        fail("wrong number of fields for " + type);
    };
    if (type == "MX") {
      need(2, 2);
      e.mx.push_back(
          {static_cast<std::uint16_t>(number(tok[i], 65535)), tok[i + 1]});
    } else if (type == "A") {
      need(1, 1);
      if (!valid_ip(AF_INET, tok[i]))
        fail("bad IPv4 address");
      e.a.push_back(tok[i]);
    } else if (type == "AAAA") {
      need(1, 1);
      if (!valid_ip(AF_INET6, tok[i]))
        fail("bad IPv6 address");
      e.aaaa.push_back(tok[i]);
    } else if (type == "PTR") {
      need(1, 1);
      e.ptr.push_back(normalize(tok[i]));
    } else if (type == "TXT") {
      need(1, SIZE_MAX);
      std::string text;
      for (auto k = i; k < tok.size(); ++k)
        text += (k == i ? "" : " ") + tok[k];
      e.txt.push_back(std::move(text));
    } else if (type == "CNAME") {
      need(1, 1);
      e.cname = normalize(tok[i]);
    } else if (type == "SOA") {
      need(1, 2);
      dns_soa soa;
      soa.minimum = static_cast<std::uint32_t>(number(tok[i], 0x7fffffff));
      if (args == 2)
        soa.ttl = static_cast<std::uint32_t>(number(tok[i + 1], 0x7fffffff));
      e.soa = soa;
    } else if (type == "TTL") {
      need(1, 1);
      e.ttl = static_cast<std::uint32_t>(number(tok[i], 0x7fffffff));
    } else if (type == "DELAY") {
      need(1, 1);
      e.delay = std::chrono::milliseconds{number(tok[i], 3600000)};
    } else if (type == "NXDOMAIN" || type == "SERVFAIL" || type == "REFUSED" ||
               type == "DROP" || type == "TRUNCATE") {
      need(0, 0);
      if (type == "NXDOMAIN")
        e.behaviour = dns_behaviour::nxdomain;
      else if (type == "SERVFAIL")
        e.behaviour = dns_behaviour::servfail;
      else if (type == "REFUSED")
        e.behaviour = dns_behaviour::refused;
      else if (type == "DROP")
        e.behaviour = dns_behaviour::drop;
      else
        e.truncate = true;
    } else {
      fail("unknown type '" + type + "'");
    }
  });
  return out;
}

struct dns_peer::impl {
  struct connection {
    int fd = -1;
    std::string buffer;
  };

  struct delayed {
    clock_type::time_point due;
    bool tcp = false;
    sockaddr_in to{};
    std::uint64_t conn = 0;
    std::string bytes;
  };

  std::string address;
  std::uint16_t port = 0;
  int udp_fd = -1;
  int tcp_fd = -1;
  int wake_fd = -1;
  std::thread thread;
  std::atomic<bool> stopping{false};

  mutable std::mutex mutex;
  std::map<std::string, dns_entry> zone;
  dns_entry fallback = [] {
    dns_entry e;
    e.behaviour = dns_behaviour::nxdomain;
    return e;
  }();
  std::map<std::pair<std::string, std::uint16_t>, std::size_t> counts;
  std::size_t total = 0;
  std::size_t tcp_total = 0;
  std::size_t peak_delayed = 0;

  // Server thread only.
  std::map<std::uint64_t, connection> connections;
  std::uint64_t next_conn = 1;
  std::vector<delayed> pending;

  ~impl() {
    for (int fd : {udp_fd, tcp_fd, wake_fd})
      if (fd >= 0)
        ::close(fd);
  }

  const dns_entry* find(const std::string& name) const {
    if (auto i = zone.find(name); i != zone.end())
      return &i->second;
    for (auto dot = name.find('.'); dot != std::string::npos;
         dot = name.find('.', dot + 1)) {
      std::string wildcard{"*"};
      wildcard.append(name, dot, std::string::npos);
      if (auto i = zone.find(wildcard); i != zone.end())
        return &i->second;
    }
    return nullptr;
  }

  // Builds the answer to one query; empty when the query is to go
  // unanswered (dropped or unparseable).
  std::optional<reply> answer(const unsigned char* q, std::size_t len,
                              bool tcp) {
    if (len < 12 || (q[2] & 0x80) != 0)
      return std::nullopt;
    auto id = get16(q);
    auto opcode = static_cast<std::uint16_t>((q[2] >> 3) & 0x0f);
    bool rd = (q[2] & 0x01) != 0;
    std::size_t pos = 12;
    std::string qname;
    while (pos < len && q[pos] != 0) {
      auto n = q[pos];
      if ((n & 0xc0) != 0 || pos + 1 + n > len)
        return std::nullopt;
      if (!qname.empty())
        qname.push_back('.');
      qname.append(reinterpret_cast<const char*>(q + pos + 1), n);
      pos += 1 + n;
    }
    if (get16(q + 4) != 1 || pos + 5 > len)
      return std::nullopt;
    pos += 1;
    auto qtype = get16(q + pos);
    std::string question(reinterpret_cast<const char*>(q + 12), pos + 4 - 12);
    pos += 4;
    std::size_t udp_limit = 512;
    // EDNS(0) OPT record (RFC 6891): its class is the UDP payload size.
    if (get16(q + 10) > 0 && pos + 11 <= len && q[pos] == 0 &&
        get16(q + pos + 1) == 41)
      udp_limit = std::max<std::size_t>(512, get16(q + pos + 3));
    qname = normalize(qname.empty() ? "." : qname);

    std::uint16_t rcode = 0;
    std::string answers, authority;
    std::uint16_t ancount = 0, nscount = 0;
    std::chrono::milliseconds delay{0};
    bool truncate = false;
    {
      std::lock_guard guard{mutex};
      ++total;
      if (tcp)
        ++tcp_total;
      ++counts[{qname, qtype}];
      if (opcode != 0) {
        rcode = rcode_notimp;
      } else {
        auto name = qname;
        const dns_entry* e = find(name);
        if (e == nullptr)
          e = &fallback;
        delay = e->delay;
        truncate = e->truncate;
        auto negative_soa = [&](const dns_entry& entry) {
          if (!entry.soa)
            return;
          std::string rdata;
          put_name(rdata, entry.soa->mname);
          put_name(rdata, entry.soa->rname);
          for (std::uint32_t v : {1u, 3600u, 600u, 86400u})
            put32(rdata, v);
          put32(rdata, entry.soa->minimum);
          put_rr(authority, name, dns_type::soa, entry.soa->ttl, rdata);
          ++nscount;
        };
        for (std::size_t links = 0;; ++links) {
          if (e->behaviour == dns_behaviour::drop)
            return std::nullopt;
          if (e->behaviour == dns_behaviour::servfail) {
            rcode = rcode_servfail;
            break;
          }
          if (e->behaviour == dns_behaviour::refused) {
            rcode = rcode_refused;
            break;
          }
          if (e->behaviour == dns_behaviour::nxdomain) {
            rcode = rcode_nxdomain;
            negative_soa(*e);
            break;
          }
          if (!e->cname.empty() &&
              qtype != static_cast<std::uint16_t>(dns_type::cname) &&
              links < max_cname_links) {
            std::string rdata;
            put_name(rdata, e->cname);
            put_rr(answers, name, dns_type::cname, e->ttl, rdata);
            ++ancount;
            name = e->cname;
            e = find(name);
            if (e == nullptr)
              break; // target outside our data: the CNAME alone
            continue;
          }
          auto before = ancount;
          if (qtype == static_cast<std::uint16_t>(dns_type::cname) &&
              !e->cname.empty()) {
            std::string rdata;
            put_name(rdata, e->cname);
            put_rr(answers, name, dns_type::cname, e->ttl, rdata);
            ++ancount;
          }
          if (qtype == static_cast<std::uint16_t>(dns_type::mx))
            for (const auto& mx : e->mx) {
              std::string rdata;
              put16(rdata, mx.priority);
              put_name(rdata, normalize(mx.host));
              put_rr(answers, name, dns_type::mx, e->ttl, rdata);
              ++ancount;
            }
          if (qtype == static_cast<std::uint16_t>(dns_type::a))
            for (const auto& a : e->a) {
              std::string rdata(4, '\0');
              if (inet_pton(AF_INET, a.c_str(), rdata.data()) != 1)
                continue;
              put_rr(answers, name, dns_type::a, e->ttl, rdata);
              ++ancount;
            }
          if (qtype == static_cast<std::uint16_t>(dns_type::aaaa))
            for (const auto& a : e->aaaa) {
              std::string rdata(16, '\0');
              if (inet_pton(AF_INET6, a.c_str(), rdata.data()) != 1)
                continue;
              put_rr(answers, name, dns_type::aaaa, e->ttl, rdata);
              ++ancount;
            }
          if (qtype == static_cast<std::uint16_t>(dns_type::ptr))
            for (const auto& target : e->ptr) {
              std::string rdata;
              put_name(rdata, target);
              put_rr(answers, name, dns_type::ptr, e->ttl, rdata);
              ++ancount;
            }
          if (qtype == static_cast<std::uint16_t>(dns_type::txt))
            for (const auto& text : e->txt) {
              // One or more <character-string>s of at most 255 octets.
              std::string rdata;
              std::size_t at = 0;
              do {
                auto piece = text.substr(at, 255);
                rdata.push_back(static_cast<char>(piece.size()));
                rdata += piece;
                at += 255;
              } while (at < text.size());
              put_rr(answers, name, dns_type::txt, e->ttl, rdata);
              ++ancount;
            }
          if (ancount == before)
            negative_soa(*e);
          break;
        }
      }
    }
    auto header = [&](bool tc, std::uint16_t an, std::uint16_t ns) {
      std::string out;
      put16(out, id);
      std::uint16_t flags = 0x8000 | static_cast<std::uint16_t>(opcode << 11) |
                            0x0400 | 0x0080 | rcode;
      if (tc)
        flags |= 0x0200;
      if (rd)
        flags |= 0x0100;
      put16(out, flags);
      put16(out, 1);
      put16(out, an);
      put16(out, ns);
      put16(out, 0);
      out.append(question);
      return out;
    };
    reply r;
    r.delay = delay;
    r.bytes = header(false, ancount, nscount) + answers + authority;
    if (!tcp && (truncate || r.bytes.size() > udp_limit))
      r.bytes = header(true, 0, 0);
    return r;
  }

  void send_tcp(std::uint64_t conn, const std::string& bytes) {
    auto i = connections.find(conn);
    if (i == connections.end())
      return;
    std::string framed;
    put16(framed, static_cast<std::uint16_t>(bytes.size()));
    framed += bytes;
    std::size_t off = 0;
    while (off < framed.size()) {
      auto n = ::send(i->second.fd, framed.data() + off, framed.size() - off,
                      MSG_NOSIGNAL);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd p{i->second.fd, POLLOUT, 0};
        if (::poll(&p, 1, 1000) <= 0)
          break;
      } else {
        break;
      }
    }
  }

  void dispatch(reply r, bool tcp, const sockaddr_in& to, std::uint64_t conn) {
    if (r.delay.count() > 0) {
      pending.push_back(
          {clock_type::now() + r.delay, tcp, to, conn, std::move(r.bytes)});
      std::lock_guard guard{mutex};
      peak_delayed = std::max(peak_delayed, pending.size());
      return;
    }
    if (tcp)
      send_tcp(conn, r.bytes);
    else
      ::sendto(udp_fd, r.bytes.data(), r.bytes.size(), 0,
               reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }

  void read_udp() {
    unsigned char buf[4096];
    for (;;) {
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      auto n = ::recvfrom(udp_fd, buf, sizeof buf, MSG_DONTWAIT,
                          reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n <= 0)
        return;
      if (auto r = answer(buf, static_cast<std::size_t>(n), false))
        dispatch(std::move(*r), false, from, 0);
    }
  }

  void accept_tcp() {
    for (;;) {
      int fd = ::accept4(tcp_fd, nullptr, nullptr, SOCK_NONBLOCK);
      if (fd < 0)
        return;
      connections.emplace(next_conn++, connection{fd, {}});
    }
  }

  // Returns false when the connection is to be closed.
  bool read_tcp(std::uint64_t id, connection& c) {
    char buf[4096];
    auto n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return false;
    if (n > 0)
      c.buffer.append(buf, static_cast<std::size_t>(n));
    while (c.buffer.size() >= 2) {
      auto size =
          get16(reinterpret_cast<const unsigned char*>(c.buffer.data()));
      if (c.buffer.size() < 2u + size)
        break;
      auto msg = c.buffer.substr(2, size);
      c.buffer.erase(0, 2u + size);
      if (auto r = answer(reinterpret_cast<const unsigned char*>(msg.data()),
                          msg.size(), true))
        dispatch(std::move(*r), true, {}, id);
    }
    return true;
  }

  void run() {
    while (!stopping.load()) {
      int timeout = -1;
      auto now = clock_type::now();
      for (const auto& d : pending) {
        auto ms = std::chrono::ceil<std::chrono::milliseconds>(d.due - now);
        auto wait = static_cast<int>(std::max<long long>(0, ms.count()));
        timeout = timeout < 0 ? wait : std::min(timeout, wait);
      }
      std::vector<pollfd> fds{{wake_fd, POLLIN, 0}, {udp_fd, POLLIN, 0}};
      if (tcp_fd >= 0)
        fds.push_back({tcp_fd, POLLIN, 0});
      std::vector<std::uint64_t> ids;
      for (auto& [id, c] : connections) {
        fds.push_back({c.fd, POLLIN, 0});
        ids.push_back(id);
      }
      if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
        break;
      if (fds[1].revents != 0)
        read_udp();
      std::size_t first_conn = 2;
      if (tcp_fd >= 0) {
        if (fds[2].revents != 0)
          accept_tcp();
        first_conn = 3;
      }
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (fds[first_conn + k].revents == 0)
          continue;
        auto i = connections.find(ids[k]);
        if (i != connections.end() && !read_tcp(ids[k], i->second)) {
          ::close(i->second.fd);
          connections.erase(i);
        }
      }
      now = clock_type::now();
      std::vector<delayed> due;
      auto split =
          std::partition(pending.begin(), pending.end(),
                         [&](const delayed& d) { return d.due > now; });
      due.assign(std::make_move_iterator(split),
                 std::make_move_iterator(pending.end()));
      pending.erase(split, pending.end());
      for (auto& d : due) {
        if (d.tcp)
          send_tcp(d.conn, d.bytes);
        else
          ::sendto(udp_fd, d.bytes.data(), d.bytes.size(), 0,
                   reinterpret_cast<const sockaddr*>(&d.to), sizeof d.to);
      }
    }
    for (auto& [id, c] : connections)
      ::close(c.fd);
    connections.clear();
  }
};

dns_peer::dns_peer() : dns_peer(options{}) {}

dns_peer::dns_peer(options opts) : impl_(std::make_unique<impl>()) {
  auto& m = *impl_;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(opts.port);
  if (inet_pton(AF_INET, opts.address.c_str(), &sa.sin_addr) != 1)
    throw std::runtime_error("dns_peer: bad IPv4 address " + opts.address);
  auto fail = [&](const char* what) {
    throw std::runtime_error(std::string{"dns_peer: "} + what + " " +
                             opts.address + ":" + std::to_string(opts.port) +
                             ": " + std::strerror(errno));
  };
  // With an ephemeral port, UDP picks it and TCP must get the same number;
  // another process may hold it for TCP, so try again with a new one.
  for (int attempt = 0;; ++attempt) {
    sa.sin_port = htons(opts.port);
    m.udp_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (m.udp_fd < 0 ||
        ::bind(m.udp_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
      fail("cannot bind UDP");
    socklen_t len = sizeof sa;
    ::getsockname(m.udp_fd, reinterpret_cast<sockaddr*>(&sa), &len);
    int rcvbuf = 4 << 20;
    ::setsockopt(m.udp_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (!opts.tcp)
      break;
    m.tcp_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(m.tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (m.tcp_fd >= 0 &&
        ::bind(m.tcp_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
        ::listen(m.tcp_fd, 128) == 0)
      break;
    if (opts.port != 0 || attempt >= 20)
      fail("cannot bind TCP");
    ::close(m.udp_fd);
    if (m.tcp_fd >= 0)
      ::close(m.tcp_fd);
    m.tcp_fd = -1;
  }
  m.wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (m.wake_fd < 0)
    fail("cannot create eventfd for");
  m.address = opts.address;
  m.port = ntohs(sa.sin_port);
  m.thread = std::thread{[&m] { m.run(); }};
}

dns_peer::~dns_peer() {
  stop();
}

void dns_peer::stop() {
  if (!impl_ || !impl_->thread.joinable())
    return;
  impl_->stopping = true;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(impl_->wake_fd, &one, sizeof one);
  impl_->thread.join();
}

std::string dns_peer::address() const {
  return impl_->address;
}

std::uint16_t dns_peer::port() const {
  return impl_->port;
}

std::string dns_peer::server() const {
  return impl_->address + ":" + std::to_string(impl_->port);
}

void dns_peer::set(std::string_view name, dns_entry entry) {
  std::lock_guard guard{impl_->mutex};
  impl_->zone[normalize(name)] = std::move(entry);
}

void dns_peer::update(std::string_view name,
                      const std::function<void(dns_entry&)>& f) {
  std::lock_guard guard{impl_->mutex};
  f(impl_->zone[normalize(name)]);
}

void dns_peer::add_mx(std::string_view name, std::uint16_t priority,
                      std::string host) {
  update(name, [&](dns_entry& e) { e.mx.push_back({priority, host}); });
}

void dns_peer::add_a(std::string_view name, std::string address) {
  update(name, [&](dns_entry& e) { e.a.push_back(address); });
}

void dns_peer::add_aaaa(std::string_view name, std::string address) {
  update(name, [&](dns_entry& e) { e.aaaa.push_back(address); });
}

void dns_peer::set_cname(std::string_view name, std::string target) {
  update(name, [&](dns_entry& e) { e.cname = normalize(target); });
}

void dns_peer::set_behaviour(std::string_view name, dns_behaviour behaviour) {
  update(name, [&](dns_entry& e) { e.behaviour = behaviour; });
}

void dns_peer::set_ttl(std::string_view name, std::uint32_t ttl) {
  update(name, [&](dns_entry& e) { e.ttl = ttl; });
}

void dns_peer::set_soa(std::string_view name, dns_soa soa) {
  update(name, [&](dns_entry& e) { e.soa = soa; });
}

void dns_peer::set_delay(std::string_view name,
                         std::chrono::milliseconds delay) {
  update(name, [&](dns_entry& e) { e.delay = delay; });
}

void dns_peer::load_zone(std::string_view text) {
  auto entries = parse_dns_zone(text);
  std::lock_guard guard{impl_->mutex};
  for (auto& [name, entry] : entries)
    impl_->zone[name] = std::move(entry);
}

void dns_peer::remove(std::string_view name) {
  std::lock_guard guard{impl_->mutex};
  impl_->zone.erase(normalize(name));
}

void dns_peer::clear() {
  std::lock_guard guard{impl_->mutex};
  impl_->zone.clear();
}

void dns_peer::set_default(dns_entry entry) {
  std::lock_guard guard{impl_->mutex};
  impl_->fallback = std::move(entry);
}

std::size_t dns_peer::queries(std::string_view name, dns_type type) const {
  std::lock_guard guard{impl_->mutex};
  auto i =
      impl_->counts.find({normalize(name), static_cast<std::uint16_t>(type)});
  return i == impl_->counts.end() ? 0 : i->second;
}

std::size_t dns_peer::queries(std::string_view name) const {
  std::lock_guard guard{impl_->mutex};
  auto key = normalize(name);
  std::size_t n = 0;
  for (auto i = impl_->counts.lower_bound({key, 0});
       i != impl_->counts.end() && i->first.first == key; ++i)
    n += i->second;
  return n;
}

std::size_t dns_peer::total_queries() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->total;
}

std::size_t dns_peer::tcp_queries() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->tcp_total;
}

std::size_t dns_peer::peak_delayed() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->peak_delayed;
}

void dns_peer::reset_counts() {
  std::lock_guard guard{impl_->mutex};
  impl_->counts.clear();
  impl_->total = 0;
  impl_->tcp_total = 0;
  impl_->peak_delayed = 0;
}

} // namespace mailassay::tests::peers
