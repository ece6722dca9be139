// SMTP probing at batch scale, against local test peers only (127.0.0.0/8;
// the system resolver is never used: every name is answered by the DNS peer).
//
//   smtp_bench [--case all|throughput|tarpit] [--source-dir DIR]
//              [--addresses 10000] [--domains 50] [--group 20] [--window 64]
//              [--page 0] [--sessions-per-host 4] [--cps 0] [--io-threads 1]
//              [--budget-ms 30000]
//              [--sessions 2000] [--tarpit-budget-ms 3000]
//              [--tarpit-sessions-per-host 0]
//
// (1) throughput: `--addresses` over `--domains` domains dN.smtp.bench.test,
//     each with one MX among mx1..mx5.smtp.bench.test, which the DNS peer
//     points at five SMTP peers on 127.0.0.2..6 sharing one port. Every
//     fifth block of five domains is not a catch-all (the peers refuse its
//     unknown users, and 10 % of its addresses are "gone-N": 550 5.1.1); the
//     others accept everything. The addresses are shuffled (fixed seed),
//     sorted by domain (the whole input, or `--page` rows at a time as the
//     batch runner reads pages), cut into groups of up to `--group`
//     neighbours at one domain, and each group goes through
//     `validation_pool::submit_group` (smtp = true, credits_prepaid = true,
//     timeout `--budget-ms`, by default the 30 s that
//     actors/batch/runner.cpp sends), with at most
//     `--window` groups in flight. Reports addresses/s, connections (sum of
//     the peers' `connections()`), connections per address, RCPT commands
//     (and how many were catch-all probes), DNS queries, peak RSS (VmHWM),
//     and checks every verdict against what the peers were told to answer.
// (2) tarpit: `--sessions` probes at once, each at its own domain whose MX
//     is a listener on 127.0.0.7 that accepts and holds every connection
//     without a byte (one epoll thread, no thread per connection), budget
//     `--tarpit-budget-ms`, no per-host limit unless
//     `--tarpit-sessions-per-host`. Samples threads, VmRSS and
//     open file descriptors before, during (every 20 ms, maximum kept) and
//     after, and how many connections the listener held at once.
//
// A watchdog reports probes left unanswered well past their budget (the
// scheduler's counters, then `stop()`, which answers them "stopped").
//
// Prints markdown tables; exits 1 when a verdict is wrong or a probe is
// missing or stuck, 0 otherwise (targets are reported, not enforced: the
// machine is shared).

#include "bench_support.hpp"

#include "actors/credits/ledger.hpp"
#include "actors/smtp/scheduler.hpp"
#include "actors/validation/validator.hpp"
#include "actors/validation_pool.hpp"
#include "config/risk_files.hpp"
#include "config/settings.hpp"
#include "net/dns_resolver.hpp"
#include "tests/net/smtp/support.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <latch>
#include <malloc.h>
#include <memory>
#include <semaphore>
#include <string>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef MAILASSAY_SOURCE_DIR
#define MAILASSAY_SOURCE_DIR "."
#endif

namespace smtp = mailassay::actors::smtp;
namespace val = mailassay::actors::validation;
namespace peers = mailassay::tests::peers;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------- process

struct proc_status {
  long rss_kb = 0; // VmRSS
  long hwm_kb = 0; // VmHWM
  int threads = 0; // Threads
};

proc_status read_status() {
  proc_status s;
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      s.rss_kb = std::stol(line.substr(6));
    else if (line.rfind("VmHWM:", 0) == 0)
      s.hwm_kb = std::stol(line.substr(6));
    else if (line.rfind("Threads:", 0) == 0)
      s.threads = std::stoi(line.substr(8));
  }
  return s;
}

long open_fds() {
  long n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator{"/proc/self/fd", ec};
       !ec && it != std::filesystem::directory_iterator{}; it.increment(ec))
    ++n;
  return n;
}

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// 2000 client sockets + 2000 held by the tarpit listener + peers.
void raise_fd_limit(rlim_t want) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0)
    return;
  if (r.rlim_cur >= want)
    return;
  r.rlim_cur = std::min(want, r.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &r);
}

rlim_t fd_limit() {
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  return r.rlim_cur;
}

double mib(long kb) {
  return static_cast<double>(kb) / 1024.0;
}

// ------------------------------------------------------------ generation

using generator = mailassay::bench::xorshift;

constexpr std::size_t mx_count = 5;

std::string domain_name(std::size_t d) {
  std::string s = "d";
  s += std::to_string(d);
  s += ".smtp.bench.test";
  return s;
}

std::string mx_name(std::size_t m) {
  std::string s = "mx";
  s += std::to_string(m + 1);
  s += ".smtp.bench.test";
  return s;
}

// Every fifth block of five domains (d0-d4, d25-d29, ...) is not a
// catch-all: spread over the five MX hosts.
bool catch_all_domain(std::size_t d) {
  return (d / 5) % 5 != 0;
}

struct address {
  std::string email;
  std::size_t domain = 0;
  bool exists = true; // false: "gone-N", refused as unknown
};

// ------------------------------------------------------------ tarpit

// Accepts every connection and holds it without sending a byte; closes its
// side when the client closes. One thread (epoll), whatever the count.
class hold_listener {
public:
  explicit hold_listener(const std::string& ip)
      : fd_(mailassay::tests::smtp::bind_socket(ip, 0)) {
    if (::listen(fd_, 4096) != 0)
      throw std::runtime_error("listen failed");
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd_;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, fd_, &ev);
    thread_ = std::thread{[this] { loop(); }};
  }
  ~hold_listener() {
    stop_ = true;
    thread_.join();
    for (int fd : held_)
      if (fd >= 0)
        ::close(fd);
    ::close(ep_);
    ::close(fd_);
  }
  hold_listener(const hold_listener&) = delete;
  hold_listener& operator=(const hold_listener&) = delete;

  std::uint16_t port() const { return mailassay::tests::smtp::port_of(fd_); }
  long accepted() const { return accepted_; }
  long open() const { return open_; }
  long peak_open() const { return peak_; }

private:
  void loop() {
    epoll_event evs[256];
    char sink[512];
    while (!stop_) {
      int n = ::epoll_wait(ep_, evs, 256, 20);
      for (int i = 0; i < n; ++i) {
        int fd = evs[i].data.fd;
        if (fd == fd_) {
          for (;;) {
            int c =
                ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c < 0)
              break;
            epoll_event ev{};
            ev.events = EPOLLIN | EPOLLRDHUP;
            ev.data.fd = c;
            ::epoll_ctl(ep_, EPOLL_CTL_ADD, c, &ev);
            if (static_cast<std::size_t>(c) >= held_.size())
              held_.resize(static_cast<std::size_t>(c) + 1, -1);
            held_[static_cast<std::size_t>(c)] = c;
            ++accepted_;
            auto now = ++open_;
            if (now > peak_)
              peak_ = now;
          }
          continue;
        }
        // Data (never expected: the client waits for a greeting) is read
        // and dropped; EOF or an error closes our side.
        bool gone = (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
        if (!gone) {
          auto r = ::read(fd, sink, sizeof sink);
          gone = r == 0 || (r < 0 && errno != EAGAIN);
        }
        if (gone) {
          ::epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
          ::close(fd);
          held_[static_cast<std::size_t>(fd)] = -1;
          --open_;
        }
      }
    }
  }

  int fd_;
  int ep_ = -1;
  std::vector<int> held_;
  std::atomic<bool> stop_{false};
  std::atomic<long> accepted_{0}, open_{0}, peak_{0};
  std::thread thread_;
};

// ------------------------------------------------------------ options

struct options {
  std::string which = "all";
  std::string source_dir = MAILASSAY_SOURCE_DIR;
  std::size_t addresses = 10000;
  std::size_t domains = 50;
  std::size_t group = 20;
  std::ptrdiff_t window = 64;
  std::size_t page = 0;
  std::size_t sessions_per_host = 4;
  std::int64_t cps = 0;
  int io_threads = 1;
  std::int64_t budget_ms = 30000; // the batch runner's timeout_ms
  std::size_t sessions = 2000;
  std::size_t tarpit_sessions_per_host = 0; // 0: unlimited
  std::chrono::milliseconds tarpit_budget{3000};
};

int usage() {
  std::fprintf(stderr, "usage: smtp_bench [--case all|throughput|tarpit] "
                       "[--addresses N] [--domains N] [--group N] [--window N] "
                       "[--page N] [--sessions-per-host N] [--cps N] "
                       "[--io-threads N] [--budget-ms MS] [--sessions N] "
                       "[--tarpit-budget-ms MS] [--tarpit-sessions-per-host N] "
                       "[--source-dir DIR]\n");
  return 2;
}

smtp::scheduler_config base_config(const options& o) {
  smtp::scheduler_config c;
  c.identity = {"probe.mailassay.io", "verify@mailassay.io"};
  c.allow_private_targets = {"127.0.0.0/8"};
  c.tls = mailassay::core::smtp::tls_policy::never;
  c.io_threads = o.io_threads;
  return c;
}

std::shared_ptr<mailassay::net::dns_resolver>
make_resolver(const peers::dns_peer& dns) {
  mailassay::config::settings cfg; // service defaults
  mailassay::net::dns_resolver_config rc;
  rc.servers = {dns.server()}; // never the system resolver
  rc.timeout = std::chrono::milliseconds(cfg.dns.timeout_ms);
  rc.tries = cfg.dns.tries;
  rc.max_in_flight = static_cast<std::size_t>(cfg.dns.max_inflight);
  rc.cache.capacity = static_cast<std::size_t>(cfg.dns.cache_size);
  rc.cache.min_ttl = static_cast<std::uint32_t>(cfg.dns.min_ttl);
  rc.cache.max_ttl = static_cast<std::uint32_t>(cfg.dns.max_ttl);
  rc.cache.negative_ttl = static_cast<std::uint32_t>(cfg.dns.negative_ttl);
  rc.cache.error_ttl = static_cast<std::uint32_t>(cfg.dns.error_ttl);
  auto r = mailassay::net::dns_resolver::create(std::move(rc));
  if (!r) {
    std::fprintf(stderr, "smtp_bench: resolver: %s\n",
                 r.error_value().message.c_str());
    std::exit(1);
  }
  return std::shared_ptr<mailassay::net::dns_resolver>{std::move(*r)};
}

// ------------------------------------------------------------ (1)

bool run_throughput(const options& o, caf::actor_system& sys) {
  peers::dns_peer dns; // 127.0.0.1, free port
  std::vector<std::unique_ptr<peers::smtp_peer>> mx;
  std::uint16_t port = 0;
  for (std::size_t m = 0; m < mx_count; ++m) {
    peers::smtp_peer_options po;
    po.address = "127.0.0." + std::to_string(m + 2);
    po.port = port;
    po.hostname = mx_name(m);
    mx.push_back(std::make_unique<peers::smtp_peer>(po));
    port = mx.back()->port();
    dns.add_a(mx_name(m), po.address);
    mx.back()->add_rule("gone-*", peers::smtp_rcpt_behaviour::no_such_user);
    mx.back()->add_rule("user-*", peers::smtp_rcpt_behaviour::accept);
  }
  for (std::size_t d = 0; d < o.domains; ++d) {
    dns.add_mx(domain_name(d), 10, mx_name(d % mx_count));
    if (!catch_all_domain(d))
      mx[d % mx_count]->add_rule("*@" + domain_name(d),
                                 peers::smtp_rcpt_behaviour::no_such_user);
  }

  // Addresses: every domain the same share, shuffled, then sorted by domain
  // per page as the batch runner does.
  generator g;
  std::vector<address> all;
  all.reserve(o.addresses);
  for (std::size_t i = 0; i < o.addresses; ++i) {
    address a;
    a.domain = i % o.domains;
    a.exists = catch_all_domain(a.domain) || g.below(10) != 0;
    a.email = (a.exists ? "user-" : "gone-") + std::to_string(i) + "@" +
              domain_name(a.domain);
    all.push_back(std::move(a));
  }
  for (std::size_t i = all.size() - 1; i > 0; --i)
    std::swap(all[i], all[g.below(i + 1)]);
  auto page = o.page == 0 ? all.size() : o.page;
  for (std::size_t at = 0; at < all.size(); at += page) {
    auto end = std::min(all.size(), at + page);
    std::stable_sort(all.begin() + static_cast<std::ptrdiff_t>(at),
                     all.begin() + static_cast<std::ptrdiff_t>(end),
                     [](const address& a, const address& b) {
                       return domain_name(a.domain) < domain_name(b.domain);
                     });
  }
  std::vector<std::pair<std::size_t, std::size_t>> groups; // [first, end)
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i + 1;
    while (j < all.size() && j - i < o.group &&
           all[j].domain == all[i].domain && (j % page) != 0)
      ++j;
    groups.emplace_back(i, j);
    i = j;
  }

  // Groups whose first decisive reply is a 550 5.1.1: the domain is shown
  // not to be a catch-all before any address is accepted, so docs/smtp.md
  // says no probe RCPT is needed in that session.
  std::size_t refused_first = 0;
  for (auto [first, end] : groups)
    if (!all[first].exists)
      ++refused_first;

  auto resolver = make_resolver(dns);
  auto cfg = base_config(o);
  cfg.port = port;
  cfg.max_sessions_per_host = o.sessions_per_host;
  cfg.connections_per_second_per_host = o.cps;
  auto made = smtp::scheduler::create(sys, cfg, resolver);
  if (!made) {
    std::fprintf(stderr, "smtp_bench: scheduler: %s\n",
                 made.error_value().message.c_str());
    return false;
  }
  std::shared_ptr<smtp::scheduler> prober{std::move(*made)};
  auto lists_cfg = mailassay::config::settings{};
  lists_cfg.risk.data_dir = o.source_dir + "/data/risk";
  auto lists = mailassay::config::load_risk_lists(lists_cfg.risk);
  if (!lists) {
    std::fprintf(stderr, "smtp_bench: %s\n",
                 lists.error_value().message.c_str());
    return false;
  }
  mailassay::core::syntax::options syntax;
  syntax.allow_test_domains = true; // the zones live under .test
  auto vp =
      std::make_shared<val::validator>(std::move(*lists), resolver, syntax);
  // Prepaid (a batch's groups): the ledger is never asked.
  auto ledger = mailassay::actors::credits::spawn_ledger(
      sys, nullptr,
      std::make_shared<mailassay::actors::credits::ledger_counters>());
  mailassay::actors::validation_pool pool{sys, vp, 2, ledger, prober->handle()};

  std::printf("\n## (1) %zu addresses, %zu domains, %zu groups of <= %zu, "
              "window %td groups, page %s\n",
              all.size(), o.domains, groups.size(), o.group, o.window,
              o.page == 0 ? "whole input" : std::to_string(o.page).c_str());
  std::printf("scheduler: max_sessions_per_host=%zu "
              "connections_per_second_per_host=%lld io_threads=%d "
              "tls=never; SMTP peers 127.0.0.2-%zu:%u, DNS peer %s\n",
              o.sessions_per_host, static_cast<long long>(o.cps), o.io_threads,
              mx_count + 1, port, dns.server().c_str());
  std::fflush(stdout);

  std::counting_semaphore<> slots{o.window};
  std::latch finished{static_cast<std::ptrdiff_t>(all.size())};
  std::atomic<std::size_t> answered{0}, timed_out{0}, wrong_verdict{0},
      wrong_catch_all{0}, unanswered{0}, credits{0}, rcpt_attempts{0},
      accepted{0}, refused{0}, catch_all_null{0};
  std::atomic<long> last_ms{0};
  auto cpu0 = cpu_seconds();
  auto t0 = steady::now();
  // Watchdog: when no address has been answered for budget + 10 s, report
  // what the scheduler holds and stop it (which answers every ask in flight
  // with "stopped"), so that a stuck probe shows up instead of a hang.
  std::atomic<bool> all_answered{false}, stuck{false};
  std::thread watchdog{[&] {
    auto quiet = std::chrono::milliseconds{o.budget_ms} + 10s;
    while (!all_answered) {
      std::this_thread::sleep_for(200ms);
      auto since = steady::now() - t0 - std::chrono::milliseconds{last_ms};
      if (all_answered || since < quiet)
        continue;
      const auto& c = prober->counters();
      auto cpu_a = cpu_seconds();
      std::this_thread::sleep_for(1s);
      std::printf("\nSTUCK: no answer for %.1f s; %zu addresses unanswered; "
                  "scheduler: in_flight=%lld waiting=%lld sessions=%llu, "
                  "process CPU %.2f s in 1 s\n",
                  std::chrono::duration<double>(since).count(),
                  static_cast<std::size_t>(all.size()) - answered.load(),
                  static_cast<long long>(c.in_flight.load()),
                  static_cast<long long>(c.waiting.load()),
                  static_cast<unsigned long long>(c.sessions.load()),
                  cpu_seconds() - cpu_a);
      std::fflush(stdout);
      stuck = true;
      prober->stop();
      return;
    }
  }};
  for (auto [first, end] : groups) {
    slots.acquire();
    std::vector<val::request> reqs;
    for (auto i = first; i < end; ++i) {
      val::request r;
      r.email = all[i].email;
      r.smtp = true;
      r.credits_prepaid = true;
      r.organization_id = "bench";
      r.timeout_ms = o.budget_ms;
      reqs.push_back(std::move(r));
    }
    auto left = std::make_shared<std::atomic<std::size_t>>(end - first);
    pool.submit_group(
        std::move(reqs), [&, first, left](std::size_t k, val::result r) {
          const auto& a = all[first + k];
          if (!r.smtp.checked || r.smtp_reply.host.empty())
            ++unanswered;
          rcpt_attempts += r.smtp_reply.attempts;
          credits += static_cast<std::size_t>(r.credits_used);
          if (r.smtp.deliverable == true)
            ++accepted;
          else if (r.smtp.deliverable == false)
            ++refused;
          if (r.smtp.deliverable != std::optional<bool>{a.exists})
            ++wrong_verdict;
          if (!r.smtp.catch_all)
            ++catch_all_null;
          else if (*r.smtp.catch_all != catch_all_domain(a.domain))
            ++wrong_catch_all;
          ++answered;
          if (r.smtp.timed_out)
            ++timed_out;
          last_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        steady::now() - t0)
                        .count();
          finished.count_down();
          if (--*left == 0)
            slots.release();
        });
  }
  finished.wait();
  all_answered = true;
  watchdog.join();
  auto seconds = std::chrono::duration<double>(steady::now() - t0).count();
  auto cpu = cpu_seconds() - cpu0;
  auto status = read_status();

  std::size_t connections = 0, sessions = 0, rcpts = 0, peak = 0;
  for (auto& p : mx) {
    connections += p->connections();
    sessions += p->sessions();
    rcpts += p->commands("RCPT");
    peak = std::max(peak, p->peak_dialogues());
  }
  std::size_t mx_queries = 0, host_queries = 0;
  for (std::size_t d = 0; d < o.domains; ++d)
    mx_queries += dns.queries(domain_name(d));
  for (std::size_t m = 0; m < mx_count; ++m)
    host_queries += dns.queries(mx_name(m));
  const auto& pc = prober->counters();
  auto n = static_cast<double>(all.size());
  auto probe_rcpts = rcpts >= rcpt_attempts ? rcpts - rcpt_attempts : 0;

  std::printf("\n| (1) throughput | value |\n|---|---:|\n");
  std::printf("| addresses | %zu (%zu accepted, %zu refused as unknown) |\n",
              all.size(), accepted.load(), refused.load());
  std::printf("| groups (submit_group) | %zu |\n", groups.size());
  std::printf("| wall time | %.3f s |\n", seconds);
  std::printf("| **addresses/s** | **%.0f** |\n", n / seconds);
  std::printf("| process CPU (scheduler + peers + DNS peer) | %.2f s, %.0f "
              "us/address |\n",
              cpu, cpu / n * 1e6);
  std::printf("| **SMTP connections** (sum of peers' connections()) | "
              "**%zu** |\n",
              connections);
  std::printf("| connections / addresses | %.4f (1/%.1f; target <= 1/20 = "
              "0.0500) |\n",
              static_cast<double>(connections) / n,
              n / std::max<double>(1, static_cast<double>(connections)));
  std::printf("| SMTP sessions (EHLO) / scheduler sessions started | %zu / "
              "%llu |\n",
              sessions, static_cast<unsigned long long>(pc.sessions.load()));
  std::printf("| RCPT commands | %zu = %zu address RCPTs + %zu catch-all "
              "probes |\n",
              rcpts, rcpt_attempts.load(), probe_rcpts);
  std::printf("| groups whose first address is refused (550 5.1.1) | %zu "
              "|\n",
              refused_first);
  std::printf("| catch-all answered from the cache | %llu routes |\n",
              static_cast<unsigned long long>(pc.catch_all_hits.load()));
  std::printf("| catch-all probes asked | %llu (target: <= %zu domains) |\n",
              static_cast<unsigned long long>(pc.catch_all_probes.load()),
              o.domains);
  std::printf("| most dialogues at once on one peer | %zu |\n", peak);
  std::printf("| DNS queries: domains (MX) / MX hosts (A+AAAA) | %zu / %zu "
              "|\n",
              mx_queries, host_queries);
  std::printf("| credits used | %zu |\n", credits.load());
  std::printf("| timed out (budget %lld ms) | %zu |\n",
              static_cast<long long>(o.budget_ms), timed_out.load());
  std::printf("| **peak RSS (VmHWM)** | **%.1f MiB** |\n", mib(status.hwm_kb));
  std::printf("| threads at the end (5 peers + DNS peer + resolver + CAF + "
              "client) | %d |\n",
              status.threads);
  std::printf("| wrong verdicts / wrong catch-all / null catch-all / no "
              "server | %zu / %zu / %zu / %zu |\n",
              wrong_verdict.load(), wrong_catch_all.load(),
              catch_all_null.load(), unanswered.load());
  std::fflush(stdout);

  pool.stop();
  caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
  prober->stop();
  resolver->shutdown();
  for (auto& p : mx)
    p->stop();
  dns.stop();
  return !stuck && wrong_verdict == 0 && wrong_catch_all == 0 &&
         unanswered == 0;
}

// ------------------------------------------------------------ (2)

struct sample {
  int threads = 0;
  long rss_kb = 0;
  long fds = 0;
};

sample take_sample() {
  auto s = read_status();
  return {s.threads, s.rss_kb, open_fds()};
}

bool run_tarpit(const options& o, caf::actor_system& sys) {
  peers::dns_peer dns;
  hold_listener pit{"127.0.0.7"};
  const std::string host = "mx.tarpit.smtp.bench.test";
  dns.add_a(host, "127.0.0.7");
  auto resolver = make_resolver(dns);
  auto cfg = base_config(o);
  cfg.port = pit.port();
  // One host: 0 lets every session open at once (the default 4 queues the
  // rest, which then wait for their budget).
  cfg.max_sessions_per_host = o.tarpit_sessions_per_host;
  cfg.connections_per_second_per_host = 0;
  auto made = smtp::scheduler::create(sys, cfg, resolver);
  if (!made) {
    std::fprintf(stderr, "smtp_bench: scheduler: %s\n",
                 made.error_value().message.c_str());
    return false;
  }
  auto& prober = *made;
  auto route = std::make_shared<mailassay::core::dns::mail_route>();
  route->kind = mailassay::core::dns::route_kind::mx;
  route->hosts.push_back({host, 10});

  auto probe_all = [&](std::size_t count, std::chrono::milliseconds budget,
                       std::latch& done, std::atomic<std::size_t>& timed_out,
                       std::atomic<long>& max_elapsed,
                       std::atomic<long>& min_elapsed) {
    for (std::size_t i = 0; i < count; ++i) {
      auto domain = "t" + std::to_string(i) + ".tarpit.bench.test";
      smtp::probe_address req;
      req.domain = domain;
      req.address = "user@" + domain;
      req.route = route;
      req.budget = budget;
      auto sent = steady::now();
      sys.spawn([req, sent, h = prober->handle(), done = &done,
                 timed_out = &timed_out, hi = &max_elapsed,
                 lo = &min_elapsed](caf::event_based_actor* self) {
        self->request(h, req.budget + 10s, req)
            .then([=](mailassay::core::smtp::address_outcome& r) {
              if (r.timed_out)
                ++*timed_out;
              long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            steady::now() - sent)
                            .count();
              for (long m = *hi; ms > m && !hi->compare_exchange_weak(m, ms);)
                ;
              for (long m = *lo; ms < m && !lo->compare_exchange_weak(m, ms);)
                ;
              done->count_down();
            });
      });
    }
  };

  // Warm-up: threads that start lazily exist before the first sample.
  {
    std::latch w{1};
    std::atomic<std::size_t> t{0};
    std::atomic<long> mx{0}, mn{1 << 30};
    probe_all(1, 300ms, w, t, mx, mn);
    w.wait();
  }
  std::this_thread::sleep_for(300ms);
  auto before = take_sample();
  auto held_before = pit.open();

  std::printf("\n## (2) %zu concurrent probes against a tarpit "
              "(127.0.0.7:%u accepts and never speaks), budget %lld ms, "
              "max_sessions_per_host=%zu\n",
              o.sessions, pit.port(),
              static_cast<long long>(o.tarpit_budget.count()),
              o.tarpit_sessions_per_host);
  std::fflush(stdout);

  std::latch done{static_cast<std::ptrdiff_t>(o.sessions)};
  std::atomic<std::size_t> timed_out{0};
  std::atomic<long> max_elapsed{0}, min_elapsed{1L << 30};
  auto t0 = steady::now();
  probe_all(o.sessions, o.tarpit_budget, done, timed_out, max_elapsed,
            min_elapsed);
  auto submitted =
      std::chrono::duration<double, std::milli>(steady::now() - t0).count();
  sample peak = before;
  long peak_held_at_ms = -1;
  long peak_rss_at_ms = -1;
  int max_threads = before.threads, min_threads = before.threads;
  long held_rss_kb = 0, held_from_ms = -1, held_to_ms = -1;
  bool stuck = false;
  while (!done.try_wait()) {
    if (steady::now() - t0 > o.tarpit_budget + 10s) {
      const auto& c = prober->counters();
      auto cpu_a = cpu_seconds();
      std::this_thread::sleep_for(1s);
      std::printf("\nSTUCK: %lld ms after the start (budget %lld ms): "
                  "scheduler: in_flight=%lld waiting=%lld sessions=%llu, "
                  "process CPU %.2f s in 1 s\n",
                  static_cast<long long>(
                      std::chrono::duration_cast<std::chrono::milliseconds>(
                          steady::now() - t0)
                          .count()),
                  static_cast<long long>(o.tarpit_budget.count()),
                  static_cast<long long>(c.in_flight.load()),
                  static_cast<long long>(c.waiting.load()),
                  static_cast<unsigned long long>(c.sessions.load()),
                  cpu_seconds() - cpu_a);
      std::fflush(stdout);
      stuck = true;
      prober->stop(); // answers the stuck asks with "stopped"
      done.wait();
      break;
    }
    auto s = take_sample();
    auto at = std::chrono::duration_cast<std::chrono::milliseconds>(
                  steady::now() - t0)
                  .count();
    // Every session connected and held: the steady state of a tarpit.
    if (pit.open() - held_before == static_cast<long>(o.sessions)) {
      held_rss_kb = std::max(held_rss_kb, s.rss_kb);
      if (held_from_ms < 0)
        held_from_ms = at;
      held_to_ms = at;
    }
    max_threads = std::max(max_threads, s.threads);
    min_threads = std::min(min_threads, s.threads);
    if (s.rss_kb > peak.rss_kb) {
      peak.rss_kb = s.rss_kb;
      peak_rss_at_ms = at;
    }
    if (s.fds > peak.fds) {
      peak.fds = s.fds;
      peak_held_at_ms = at;
    }
    std::this_thread::sleep_for(20ms);
  }
  auto all_done_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0)
          .count();
  // Let the listener see the clients' FINs.
  for (int i = 0; i < 100 && pit.open() > held_before; ++i)
    std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(200ms);
  auto after = take_sample();
  ::malloc_trim(0); // what is left after giving free pages back
  auto trimmed = take_sample();

  auto delta_kb = peak.rss_kb - before.rss_kb;
  auto held = pit.peak_open();
  std::printf("\n| (2) tarpit | before | peak during | after |\n"
              "|---|---:|---:|---:|\n");
  std::printf("| threads | %d | %d (min %d) | %d |\n", before.threads,
              max_threads, min_threads, after.threads);
  std::printf("| RSS (VmRSS) | %.1f MiB | %.1f MiB (at %ld ms) | %.1f MiB "
              "(%.1f MiB after malloc_trim) |\n",
              mib(before.rss_kb), mib(peak.rss_kb), peak_rss_at_ms,
              mib(after.rss_kb), mib(trimmed.rss_kb));
  if (held_from_ms >= 0)
    std::printf("| RSS while all %zu sessions were held (%ld-%ld ms) | | "
                "%.1f MiB | |\n",
                o.sessions, held_from_ms, held_to_ms, mib(held_rss_kb));
  else
    std::printf("| RSS while all %zu sessions were held | | never all held "
                "| |\n",
                o.sessions);
  std::printf("| open fds (client + listener sides) | %ld | %ld (at %ld ms) "
              "| %ld |\n",
              before.fds, peak.fds, peak_held_at_ms, after.fds);
  std::printf("| connections held by the tarpit | %ld | %ld | %ld |\n",
              held_before, held, pit.open());
  std::printf("\n| (2) tarpit | value |\n|---|---:|\n");
  std::printf("| probes / connections accepted | %zu / %ld |\n", o.sessions,
              pit.accepted() - 1 /* warm-up */);
  std::printf("| probes submitted in | %.1f ms |\n", submitted);
  std::printf("| probes timed out | %zu |\n", timed_out.load());
  std::printf("| probe elapsed min / max | %ld / %ld ms (budget %lld) |\n",
              min_elapsed.load(), max_elapsed.load(),
              static_cast<long long>(o.tarpit_budget.count()));
  std::printf("| all answered after | %ld ms |\n", all_done_ms);
  if (held_from_ms >= 0)
    std::printf("| **memory per session** (RSS while held - before) / "
                "sessions | **%.1f KiB** |\n",
                static_cast<double>(held_rss_kb - before.rss_kb) /
                    static_cast<double>(o.sessions));
  std::printf("| memory per session at the peak (answers being built) | "
              "%.1f KiB |\n",
              static_cast<double>(delta_kb) / static_cast<double>(o.sessions));
  std::printf("| threads added | %d |\n", max_threads - before.threads);
  std::fflush(stdout);

  prober->stop();
  resolver->shutdown();
  dns.stop();
  return !stuck && timed_out == o.sessions;
}

} // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage();
    std::string value = argv[++i];
    if (arg == "--case")
      o.which = value;
    else if (arg == "--source-dir")
      o.source_dir = value;
    else if (arg == "--addresses")
      o.addresses = std::stoul(value);
    else if (arg == "--domains")
      o.domains = std::stoul(value);
    else if (arg == "--group")
      o.group = std::stoul(value);
    else if (arg == "--window")
      o.window = std::stol(value);
    else if (arg == "--page")
      o.page = std::stoul(value);
    else if (arg == "--sessions-per-host")
      o.sessions_per_host = std::stoul(value);
    else if (arg == "--cps")
      o.cps = std::stoll(value);
    else if (arg == "--io-threads")
      o.io_threads = std::stoi(value);
    else if (arg == "--budget-ms")
      o.budget_ms = std::stoll(value);
    else if (arg == "--sessions")
      o.sessions = std::stoul(value);
    else if (arg == "--tarpit-sessions-per-host")
      o.tarpit_sessions_per_host = std::stoul(value);
    else if (arg == "--tarpit-budget-ms")
      o.tarpit_budget = std::chrono::milliseconds{std::stol(value)};
    else
      return usage();
  }
  if (o.domains < 1 || o.addresses < o.domains || o.group < 1 || o.window < 1 ||
      o.sessions < 1 ||
      (o.which != "all" && o.which != "throughput" && o.which != "tarpit"))
    return usage();
  raise_fd_limit(static_cast<rlim_t>(o.sessions * 2 + 4096));

  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  char when[64];
  auto now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::localtime(&now));
  std::printf("smtp_bench %s, load average %.2f %.2f %.2f, %ld cores, "
              "RLIMIT_NOFILE %llu\n",
              when, load[0], load[1], load[2], ::sysconf(_SC_NPROCESSORS_ONLN),
              static_cast<unsigned long long>(fd_limit()));

  caf::actor_system_config cfg; // like `mailassay serve`
  cfg.set("scheduler.max-threads", 2);
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};

  bool ok = true;
  if (o.which != "tarpit")
    ok = run_throughput(o, sys) && ok;
  if (o.which != "throughput")
    ok = run_tarpit(o, sys) && ok;
  std::printf("\nsmtp_bench: %s\n", ok ? "OK" : "CHECK (see above)");
  return ok ? 0 : 1;
}
