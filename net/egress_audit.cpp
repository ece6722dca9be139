#include "net/egress_audit.hpp"

#include "core/dns/records.hpp"
#include "core/dns/route.hpp"
#include "core/egress/decide.hpp"
#include "core/egress/names.hpp"
#include "core/smtp/session.hpp"
#include "net/dns_resolver.hpp"
#include "net/smtp_client.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mailassay::net {

namespace {

using core::dns::lookup_result;
using core::dns::mail_route;
using core::dns::record_type;
using steady = std::chrono::steady_clock;

// The answers of one round of DNS questions, filled by the resolver's
// callbacks; shared with them, so a cancelled round may end first.
struct dns_round {
  std::vector<lookup_result> lookups;
  std::vector<mail_route> routes;
  std::size_t remaining = 0;
};

// A socket address from text and a port; nullopt for a bad address.
struct socket_address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_UNSPEC;
};

std::optional<socket_address> make_address(const std::string& ip,
                                           std::uint16_t port) {
  socket_address out;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.length = sizeof(sockaddr_in);
    out.family = AF_INET;
    return out;
  }
  out.storage = {};
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.length = sizeof(sockaddr_in6);
    out.family = AF_INET6;
    return out;
  }
  return std::nullopt;
}

std::string text_of(const sockaddr_storage& sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(sa).sin_addr, buf,
              sizeof buf);
  else if (sa.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr,
              buf, sizeof buf);
  return buf;
}

// A reference MX host and the address tried.
struct target {
  std::string host;
  std::string address;
};

} // namespace

struct egress_audit::impl {
  impl(egress_audit_config c, std::shared_ptr<dns_resolver> r)
      : config(std::move(c)), resolver(std::move(r)) {}

  egress_audit_config config;
  std::shared_ptr<dns_resolver> resolver;
  std::mutex mutex;
  std::condition_variable cv;
  bool cancelled = false;

  bool stopped() {
    std::lock_guard guard{mutex};
    return cancelled;
  }

  // Asks every lookup, mail route and host at once; returns when all are
  // answered or the audit is cancelled (unanswered ones then read as
  // time-outs).
  dns_round ask(const std::vector<std::pair<std::string, record_type>>& lookups,
                const std::vector<std::string>& routes,
                const std::vector<std::string>& hosts) {
    auto round = std::make_shared<dns_round>();
    round->lookups.resize(lookups.size());
    for (auto& l : round->lookups)
      l.code = core::dns::rcode::timeout;
    round->routes.resize(routes.size() + hosts.size());
    round->remaining = round->lookups.size() + round->routes.size();
    // The callbacks keep this impl alive: `cv` and `mutex` outlive them.
    auto self = self_ref.lock();
    auto answered = [self, round](auto fill) {
      std::lock_guard guard{self->mutex};
      fill(*round);
      --round->remaining;
      self->cv.notify_all();
    };
    for (std::size_t i = 0; i < lookups.size(); ++i)
      resolver->resolve(
          lookups[i].first, lookups[i].second, [answered, i](lookup_result r) {
            answered([&](dns_round& d) { d.lookups[i] = std::move(r); });
          });
    for (std::size_t i = 0; i < routes.size() + hosts.size(); ++i) {
      auto done = [answered, i](mail_route r) {
        answered([&](dns_round& d) { d.routes[i] = std::move(r); });
      };
      if (i < routes.size())
        resolver->resolve_mail_route(routes[i], done);
      else
        resolver->resolve_host(hosts[i - routes.size()], done);
    }
    std::unique_lock lock{mutex};
    cv.wait(lock, [&] { return round->remaining == 0 || cancelled; });
    return *round;
  }

  // The local address the kernel would send from toward `to`: a connected
  // UDP socket sends nothing but has its source chosen (getsockname).
  std::string local_address_toward(const std::string& to, std::string& why) {
    auto sa = make_address(to, config.port);
    if (!sa) {
      why = "bad address " + to;
      return {};
    }
    int fd = ::socket(sa->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      return {};
    }
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    std::string out;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa->storage),
                  sa->length) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0)
      why = "no route to " + to + ": " + std::strerror(errno);
    else
      out = text_of(local);
    ::close(fd);
    return out;
  }

  // Opens a TCP connection to every target at once (bound to the source
  // address when set), each at most `connect_timeout`.
  std::vector<core::egress::connect_observation>
  connect_all(const std::vector<target>& targets) {
    std::vector<core::egress::connect_observation> out;
    std::vector<int> fds(targets.size(), -1);
    auto source = config.source_address.empty()
                      ? std::nullopt
                      : make_address(config.source_address, 0);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      core::egress::connect_observation o{targets[i].host, targets[i].address,
                                          false, ""};
      auto decision = config.policy.check(targets[i].address);
      auto sa = make_address(targets[i].address, config.port);
      if (!decision.allowed) {
        o.error = "address policy refuses a " +
                  std::string{core::smtp::to_string(decision.kind)} +
                  " address (smtp.allow_private_targets)";
      } else if (!sa) {
        o.error = "bad address";
      } else if (source && source->family != sa->family) {
        o.error = "smtp.source_address is of another address family";
      } else {
        int fd =
            ::socket(sa->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd >= 0 && source &&
            ::bind(fd, reinterpret_cast<const sockaddr*>(&source->storage),
                   source->length) != 0) {
          o.error = std::string{"cannot bind smtp.source_address: "} +
                    std::strerror(errno);
          ::close(fd);
          fd = -1;
        } else if (fd < 0) {
          o.error = std::strerror(errno);
        } else if (::connect(fd,
                             reinterpret_cast<const sockaddr*>(&sa->storage),
                             sa->length) == 0) {
          o.opened = true;
          ::close(fd);
          fd = -1;
        } else if (errno != EINPROGRESS) {
          o.error = std::strerror(errno);
          ::close(fd);
          fd = -1;
        }
        fds[i] = fd;
      }
      out.push_back(std::move(o));
    }
    auto deadline = steady::now() + config.connect_timeout;
    for (;;) {
      std::vector<pollfd> waiting;
      std::vector<std::size_t> index;
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i] >= 0) {
          waiting.push_back({fds[i], POLLOUT, 0});
          index.push_back(i);
        }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - steady::now());
      if (waiting.empty() || left.count() <= 0 || stopped())
        break;
      // Short slices, so that a cancel is noticed.
      auto slice = static_cast<int>(std::min<long long>(left.count(), 200));
      if (::poll(waiting.data(), waiting.size(), slice) < 0 && errno != EINTR)
        break;
      for (std::size_t k = 0; k < waiting.size(); ++k) {
        if (waiting[k].revents == 0)
          continue;
        auto i = index[k];
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fds[i], SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0)
          out[i].opened = true;
        else
          out[i].error = std::strerror(err);
        ::close(fds[i]);
        fds[i] = -1;
      }
    }
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i] >= 0) {
        out[i].error = "no answer within " +
                       std::to_string(config.connect_timeout.count() / 1000) +
                       " s (dropped by a firewall?)";
        ::close(fds[i]);
      }
    return out;
  }

  // One EHLO with `t` through the SMTP client (its proxy and source
  // address), then QUIT.
  core::egress::greeting_observation greet(const target& t) {
    core::egress::greeting_observation o;
    o.attempted = true;
    o.host = t.host;
    o.address = t.address;
    o.via_proxy = !config.socks5_proxy.empty();
    core::smtp::session_config sc;
    sc.host = t.host;
    sc.helo = config.helo;
    sc.mail_from = config.mail_from;
    sc.tls = core::smtp::tls_policy::never;
    auto session = core::smtp::session::make(std::move(sc), {});
    if (!session) {
      o.not_started =
          "no EHLO sent: " + session.error_value().message + " (see helo_dns)";
      return o;
    }
    smtp_client_config cc;
    cc.policy = config.policy;
    cc.socks5_proxy = config.socks5_proxy;
    cc.source_address = config.source_address;
    auto client = smtp_client::create(std::move(cc));
    if (!client) {
      o.connect_error = client.error_value().message;
      return o;
    }
    smtp_call call{{t.host, t.address, config.port, config.step_timeout,
                    steady::now() + 3 * config.step_timeout},
                   std::move(*session)};
    auto result = std::make_shared<std::optional<smtp_call_result>>();
    auto self = self_ref.lock();
    (*client)->run(std::move(call), [self, result](smtp_call_result r) {
      std::lock_guard guard{self->mutex};
      *result = std::move(r);
      self->cv.notify_all();
    });
    {
      std::unique_lock lock{mutex};
      cv.wait(lock, [&] { return result->has_value() || cancelled; });
    }
    // Ends the call if it is still running (cancelled); its callback still
    // runs, into `result`.
    (*client)->shutdown();
    std::lock_guard guard{mutex};
    if (!result->has_value()) {
      o.failure = "timeout";
      return o;
    }
    const auto& report = (*result)->report;
    if (report.transport != core::smtp::connect_failure::none) {
      o.connect_error = std::string{core::smtp::to_string(report.transport)} +
                        (report.detail.empty() ? "" : ": " + report.detail);
      return o;
    }
    const auto& r = report.result;
    o.greeting_code = r.greeting_code;
    o.greeting_text = r.greeting;
    o.failure = std::string{core::smtp::to_string(r.failure)};
    o.failure_code = r.failure_code;
    o.failure_text = r.failure_message;
    o.ehlo_name = r.caps.server_name;
    o.extensions = r.caps.keywords;
    if (o.ehlo_name.empty() && r.caps.esmtp)
      o.ehlo_name = t.host;
    return o;
  }

  core::egress::report run() {
    namespace eg = core::egress;
    eg::report rep;
    const auto& c = config;
    auto from_domain = [&]() -> std::string {
      auto at = c.mail_from.rfind('@');
      return at == std::string::npos ? std::string{}
                                     : c.mail_from.substr(at + 1);
    }();
    bool helo_ok = eg::is_fqdn(c.helo);

    // 1. The identity's names and the reference domains' routes.
    std::vector<std::pair<std::string, record_type>> first;
    if (helo_ok) {
      first.emplace_back(c.helo, record_type::a);
      first.emplace_back(c.helo, record_type::aaaa);
    }
    if (!from_domain.empty()) {
      first.emplace_back(from_domain, record_type::mx);
      first.emplace_back(from_domain, record_type::a);
    }
    auto r1 = ask(first, c.reference_domains, {});
    std::optional<lookup_result> helo_a, helo_aaaa, from_mx, from_a;
    std::size_t k = 0;
    if (helo_ok) {
      helo_a = r1.lookups[k++];
      helo_aaaa = r1.lookups[k++];
    }
    if (!from_domain.empty()) {
      from_mx = r1.lookups[k++];
      from_a = r1.lookups[k++];
    }
    std::vector<std::string> helo_addresses;
    for (const auto* r : {&helo_a, &helo_aaaa})
      if (*r)
        helo_addresses.insert(helo_addresses.end(), (*r)->addresses.begin(),
                              (*r)->addresses.end());

    // 2. The first MX host of each reference domain, and its addresses.
    std::vector<target> targets;
    std::vector<std::string> unresolved;
    std::vector<std::string> mx_hosts;
    std::vector<std::size_t> mx_of;
    for (std::size_t i = 0; i < c.reference_domains.size(); ++i) {
      const auto& route = r1.routes[i];
      if (route.kind == core::dns::route_kind::implicit_mx &&
          !route.addresses.empty())
        targets.push_back({c.reference_domains[i], route.addresses.front()});
      else if (route.kind == core::dns::route_kind::mx &&
               !route.hosts.empty()) {
        mx_hosts.push_back(route.hosts.front().host);
        mx_of.push_back(i);
      } else
        unresolved.push_back(c.reference_domains[i] + ": " +
                             std::string{core::dns::to_string(route.kind)});
    }
    auto r2 = ask({}, {}, mx_hosts);
    for (std::size_t i = 0; i < mx_hosts.size(); ++i) {
      const auto& addrs = r2.routes[i].addresses;
      // IPv4 first: most egress has no IPv6 route.
      auto pick = std::find_if(addrs.begin(), addrs.end(), [](const auto& a) {
        return a.find(':') == std::string::npos;
      });
      if (pick == addrs.end() && !addrs.empty())
        pick = addrs.begin();
      if (pick != addrs.end())
        targets.push_back({mx_hosts[i], *pick});
      else
        unresolved.push_back(
            mx_hosts[i] + ": " +
            std::string{core::dns::to_string(r2.routes[i].kind)});
    }

    // 3. The egress address.
    std::string address_error;
    rep.egress_address = c.source_address;
    if (rep.egress_address.empty()) {
      if (targets.empty())
        address_error = "no reference MX host resolved";
      else
        rep.egress_address =
            local_address_toward(targets.front().address, address_error);
    }
    bool routable = !rep.egress_address.empty() &&
                    c.policy.check(rep.egress_address).allowed;

    // 4. Reverse DNS and blocklists, while port 25 is tried.
    std::vector<std::pair<std::string, record_type>> third;
    auto reverse = core::egress::reverse_name(rep.egress_address);
    if (reverse)
      third.emplace_back(*reverse, record_type::ptr);
    std::vector<std::string> zones;
    if (reverse && routable)
      for (const auto& zone : c.dnsbl)
        if (auto name = core::egress::dnsbl_name(rep.egress_address, zone)) {
          zones.push_back(zone);
          third.emplace_back(*name, record_type::a);
          third.emplace_back(*name, record_type::txt);
        }
    auto round = std::make_shared<std::optional<dns_round>>();
    std::thread asker;
    // The DNS round runs beside the connections (both wait on the network).
    asker = std::thread{[this, &third, round] { *round = ask(third, {}, {}); }};
    auto tries = connect_all(targets);
    asker.join();
    auto& r3 = **round;

    eg::ptr_observation po;
    po.address = rep.egress_address;
    po.address_error = address_error;
    po.routable = routable;
    po.helo = c.helo;
    if (reverse)
      po.ptr = r3.lookups[0];
    else if (!rep.egress_address.empty())
      po.address_error = "not an IP address: " + rep.egress_address;
    po.helo_addresses = helo_addresses;
    // Unasked lists (no address, or one receivers do not see) go in by
    // name: the decision says why they were not asked.
    std::vector<eg::dnsbl_observation> lists;
    for (const auto& zone : c.dnsbl)
      lists.push_back({zone, {}, {}});
    for (std::size_t i = 0; i < zones.size(); ++i)
      lists[i] = {zones[i], r3.lookups[1 + 2 * i], r3.lookups[2 + 2 * i]};

    rep.checks.push_back(eg::decide_helo_dns(c.helo, helo_a, helo_aaaa));
    rep.checks.push_back(eg::decide_egress_ptr(po));
    rep.checks.push_back(eg::decide_dnsbl(rep.egress_address, routable, lists));
    std::string resolution;
    for (const auto& u : unresolved)
      resolution += (resolution.empty() ? "" : ", ") + u;
    rep.checks.push_back(eg::decide_port25(c.port, tries, resolution));

    // 5. One EHLO: with the first host that took a connection, or through
    // the proxy with the first host (port 25 may be closed here but open
    // at the proxy).
    eg::greeting_observation go;
    const target* chosen = nullptr;
    for (std::size_t i = 0; i < tries.size() && !chosen; ++i)
      if (tries[i].opened)
        chosen = &targets[i];
    if (!chosen && !c.socks5_proxy.empty() && !targets.empty())
      chosen = &targets.front();
    if (chosen && !stopped())
      go = greet(*chosen);
    else if (!targets.empty()) {
      go.attempted = true;
      go.host = targets.front().host;
      go.address = targets.front().address;
      go.not_started = stopped() ? "the audit was stopped"
                                 : "no reference host took a connection "
                                   "(see port25)";
    }
    rep.checks.push_back(eg::decide_smtp_greeting(go));
    rep.checks.push_back(eg::decide_mail_from(c.mail_from, from_mx, from_a));
    return rep;
  }

  std::weak_ptr<impl> self_ref;
};

egress_audit::egress_audit(egress_audit_config config,
                           std::shared_ptr<dns_resolver> resolver)
    : impl_(std::make_shared<impl>(std::move(config), std::move(resolver))) {
  impl_->self_ref = impl_;
}

egress_audit::~egress_audit() {
  cancel();
}

core::egress::report egress_audit::run() {
  return impl_->run();
}

void egress_audit::cancel() {
  std::lock_guard guard{impl_->mutex};
  impl_->cancelled = true;
  impl_->cv.notify_all();
}

} // namespace mailassay::net
