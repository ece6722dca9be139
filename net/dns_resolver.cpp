#include "net/dns_resolver.hpp"

#include "core/dns/route.hpp"

#include <ares.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <deque>
#include <mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>

namespace mailassay::net {

namespace {

using core::dns::lookup_result;
using core::dns::mail_route;
using core::dns::rcode;
using core::dns::record_type;

constexpr int class_in = 1;   // RFC 1035 §3.2.4
constexpr int type_a = 1;     // RFC 1035 §3.2.2
constexpr int type_soa = 6;   // RFC 1035 §3.2.2
constexpr int type_mx = 15;   // RFC 1035 §3.2.2
constexpr int type_aaaa = 28; // RFC 3596 §2.1
constexpr int max_addresses = 256;

struct job {
  std::string name;
  record_type type = record_type::mx;
  std::function<void(lookup_result)> done;
};

template <class F, class... Ts>
void call_safely(F& f, Ts&&... xs) {
  // A callback that throws must not unwind through c-ares' C frames.
  try {
    f(std::forward<Ts>(xs)...);
  } catch (...) {
  }
}

lookup_result failed(rcode code) {
  lookup_result r;
  r.code = code;
  return r;
}

rcode to_rcode(int status) {
  switch (status) {
    case ARES_SUCCESS: return rcode::ok;
    case ARES_ENODATA: return rcode::nodata;
    case ARES_ENOTFOUND: return rcode::nxdomain;
    case ARES_ESERVFAIL: return rcode::servfail;
    case ARES_ETIMEOUT:
    case ARES_ECANCELLED:
    case ARES_EDESTRUCTION: return rcode::timeout;
    case ARES_EREFUSED: return rcode::refused;
    default: return rcode::other_error;
  }
}

std::uint32_t get32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
         (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

std::uint16_t get16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

bool skip_name(const unsigned char*& p, const unsigned char* abuf, int alen) {
  char* name = nullptr;
  long len = 0;
  if (ares_expand_name(p, abuf, alen, &name, &len) != ARES_SUCCESS)
    return false;
  ares_free_string(name);
  p += len;
  return true;
}

void lower(std::optional<std::uint32_t>& acc, std::uint32_t ttl) {
  acc = acc ? std::min(*acc, ttl) : ttl;
}

// What c-ares' parsers leave out: the smallest TTL of the answer section
// (CNAME links included) and the negative TTL of the authority section's
// SOA, min(SOA TTL, MINIMUM) (RFC 2308 §5).
struct wire_ttls {
  std::optional<std::uint32_t> answer;
  std::optional<std::uint32_t> negative;
};

wire_ttls read_ttls(const unsigned char* abuf, int alen) {
  wire_ttls out;
  if (abuf == nullptr || alen < 12)
    return out;
  const unsigned char* end = abuf + alen;
  const unsigned char* p = abuf + 12;
  auto qd = get16(abuf + 4);
  auto an = get16(abuf + 6);
  auto ns = get16(abuf + 8);
  for (unsigned i = 0; i < qd; ++i) {
    if (!skip_name(p, abuf, alen) || end - p < 4)
      return out;
    p += 4;
  }
  for (unsigned i = 0; i < unsigned{an} + ns; ++i) {
    if (!skip_name(p, abuf, alen) || end - p < 10)
      return out;
    auto type = get16(p);
    auto ttl = get32(p + 4);
    auto rdlen = get16(p + 8);
    p += 10;
    if (end - p < rdlen)
      return out;
    if (i < an) {
      lower(out.answer, ttl);
    } else if (type == type_soa) {
      const unsigned char* rd = p;
      if (skip_name(rd, abuf, alen) && skip_name(rd, abuf, alen) &&
          rd + 20 <= p + rdlen)
        lower(out.negative, std::min(ttl, get32(rd + 16)));
    }
    p += rdlen;
  }
  return out;
}

lookup_result parse_mx(const unsigned char* abuf, int alen) {
  lookup_result r;
  ares_mx_reply* head = nullptr;
  auto status = ares_parse_mx_reply(abuf, alen, &head);
  if (status != ARES_SUCCESS)
    return failed(to_rcode(status));
  for (auto* mx = head; mx != nullptr; mx = mx->next)
    r.mx.push_back({mx->host != nullptr ? mx->host : "", mx->priority});
  ares_free_data(head);
  r.code = r.mx.empty() ? rcode::nodata : rcode::ok;
  return r;
}

lookup_result parse_addresses(record_type type, const unsigned char* abuf,
                              int alen) {
  lookup_result r;
  int count = max_addresses;
  char text[INET6_ADDRSTRLEN];
  if (type == record_type::a) {
    ares_addrttl addrs[max_addresses];
    auto status = ares_parse_a_reply(abuf, alen, nullptr, addrs, &count);
    if (status != ARES_SUCCESS)
      return failed(to_rcode(status));
    for (int i = 0; i < count; ++i)
      if (inet_ntop(AF_INET, &addrs[i].ipaddr, text, sizeof text) != nullptr)
        r.addresses.emplace_back(text);
    r.has_a = !r.addresses.empty();
  } else {
    ares_addr6ttl addrs[max_addresses];
    auto status = ares_parse_aaaa_reply(abuf, alen, nullptr, addrs, &count);
    if (status != ARES_SUCCESS)
      return failed(to_rcode(status));
    for (int i = 0; i < count; ++i)
      if (inet_ntop(AF_INET6, &addrs[i].ip6addr, text, sizeof text) != nullptr)
        r.addresses.emplace_back(text);
    r.has_aaaa = !r.addresses.empty();
  }
  r.code = r.addresses.empty() ? rcode::nodata : rcode::ok;
  return r;
}

lookup_result parse(int status, record_type type, const unsigned char* abuf,
                    int alen) {
  auto ttls = read_ttls(abuf, alen);
  lookup_result r;
  if (status != ARES_SUCCESS)
    r = failed(to_rcode(status));
  else if (type == record_type::mx)
    r = parse_mx(abuf, alen);
  else
    r = parse_addresses(type, abuf, alen);
  if (r.code == rcode::ok)
    r.ttl = ttls.answer;
  else if (r.code == rcode::nxdomain || r.code == rcode::nodata)
    r.ttl = ttls.negative;
  return r;
}

int wire_type(record_type type) {
  switch (type) {
    case record_type::mx: return type_mx;
    case record_type::a: return type_a;
    case record_type::aaaa: return type_aaaa;
  }
  return type_mx;
}

} // namespace

struct dns_resolver::impl {
  struct query {
    impl* self;
    job work;
  };

  explicit impl(dns_resolver_config cfg)
      : config(std::move(cfg)), routes(config.cache), hosts(config.cache) {}

  ~impl() {
    if (thread.joinable()) {
      if (thread.get_id() == std::this_thread::get_id())
        thread.detach();
      else
        thread.join();
    }
    if (channel != nullptr)
      ares_destroy(channel);
    if (wake_fd >= 0)
      ::close(wake_fd);
    ares_library_cleanup();
  }

  core::dns::time_point now() const {
    return config.clock ? config.clock() : std::chrono::steady_clock::now();
  }

  bool on_loop_thread() const { return std::this_thread::get_id() == loop_id; }

  void wake() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }

  // Any thread.
  void submit(job work) {
    if (on_loop_thread()) {
      ++queued;
      waiting.push_back(std::move(work));
      return;
    }
    {
      std::lock_guard guard{inbox_mutex};
      if (!stopping) {
        ++queued;
        bool was_idle = inbox.empty() && deliveries.empty();
        inbox.push_back(std::move(work));
        if (was_idle)
          wake();
        return;
      }
    }
    call_safely(work.done, failed(rcode::timeout));
  }

  // Any thread: runs `f` on the loop thread (inline once shut down).
  void deliver(std::function<void()> f) {
    {
      std::lock_guard guard{inbox_mutex};
      if (!stopping) {
        bool was_idle = inbox.empty() && deliveries.empty();
        deliveries.push_back(std::move(f));
        if (was_idle)
          wake();
        return;
      }
    }
    call_safely(f);
  }

  enum class lookup { served, joined, started };

  // Answers `callback` from `cache` when it holds `name`; else adds it to
  // the lookup in flight for `name`, starting one when there is none (the
  // caller then sends the queries).
  lookup serve_or_join(core::dns::cache<route_callback>& cache,
                       const std::string& name, route_callback& callback) {
    std::shared_ptr<const mail_route> hit;
    bool start = false;
    {
      std::lock_guard guard{cache_mutex};
      auto found = cache.find(name, now());
      if (found.status == core::dns::cache_status::hit)
        hit = std::move(found.route);
      else
        start = cache.begin(name, std::move(callback));
    }
    if (!hit)
      return start ? lookup::started : lookup::joined;
    deliver([cb = std::move(callback), r = std::move(hit)]() mutable {
      call_safely(cb, *r);
    });
    return lookup::served;
  }

  void route(std::string domain, route_callback callback) {
    ++route_requests;
    auto name = core::dns::normalize_name(domain);
    switch (serve_or_join(routes, name, callback)) {
      case lookup::served: ++cache_hits; return;
      case lookup::joined: ++cache_joins; return;
      case lookup::started: break;
    }
    ++cache_misses;
    submit({name, record_type::mx,
            [this, name](lookup_result mx) { on_mx(name, std::move(mx)); }});
  }

  void on_mx(const std::string& name, lookup_result mx) {
    if (!core::dns::needs_address_lookup(mx)) {
      finish(name, core::dns::interpret(name, mx));
      return;
    }
    // RFC 5321 §5.1: no MX, so the domain's own addresses decide.
    struct pair_state {
      lookup_result mx;
      std::optional<lookup_result> a, aaaa;
    };
    auto state = std::make_shared<pair_state>();
    state->mx = std::move(mx);
    auto done = [this, name, state] {
      if (state->a && state->aaaa)
        finish(name, core::dns::interpret(name, state->mx,
                                          core::dns::merge_address_answers(
                                              *state->a, *state->aaaa)));
    };
    submit({name, record_type::a, [state, done](lookup_result r) {
              state->a = std::move(r);
              done();
            }});
    submit({name, record_type::aaaa, [state, done](lookup_result r) {
              state->aaaa = std::move(r);
              done();
            }});
  }

  void finish(const std::string& name, const mail_route& result) {
    std::vector<route_callback> waiters;
    {
      std::lock_guard guard{cache_mutex};
      waiters = routes.complete(name, result, now());
    }
    for (auto& w : waiters)
      call_safely(w, result);
  }

  void host(std::string host_name, route_callback callback) {
    auto name = core::dns::normalize_name(host_name);
    if (serve_or_join(hosts, name, callback) != lookup::started)
      return;
    struct pair_state {
      std::optional<lookup_result> a, aaaa;
    };
    auto state = std::make_shared<pair_state>();
    auto done = [this, name, state] {
      if (!state->a || !state->aaaa)
        return;
      // A host's addresses read like an implicit MX: same TTL rules.
      lookup_result no_mx;
      no_mx.code = rcode::nodata;
      auto r = core::dns::interpret(
          name, no_mx,
          core::dns::merge_address_answers(*state->a, *state->aaaa));
      std::vector<route_callback> waiters;
      {
        std::lock_guard guard{cache_mutex};
        waiters = hosts.complete(name, r, now());
      }
      for (auto& w : waiters)
        call_safely(w, r);
    };
    submit({name, record_type::a, [state, done](lookup_result r) {
              state->a = std::move(r);
              done();
            }});
    submit({name, record_type::aaaa, [state, done](lookup_result r) {
              state->aaaa = std::move(r);
              done();
            }});
  }

  static void on_answer(void* arg, int status, int, unsigned char* abuf,
                        int alen) {
    std::unique_ptr<query> q{static_cast<query*>(arg)};
    auto& self = *q->self;
    --self.in_flight;
    auto result = parse(status, q->work.type, abuf, alen);
    if (core::dns::is_failure(result.code))
      ++self.failures;
    else
      ++self.answers;
    call_safely(q->work.done, std::move(result));
  }

  static void on_socket_state(void* data, ares_socket_t fd, int readable,
                              int writable) {
    auto& self = *static_cast<impl*>(data);
    if (readable == 0 && writable == 0)
      self.sockets.erase(fd);
    else
      self.sockets[fd] = static_cast<short>((readable != 0 ? POLLIN : 0) |
                                            (writable != 0 ? POLLOUT : 0));
  }

  void start(job work) {
    --queued;
    ++queries_sent;
    auto n = ++in_flight;
    for (auto peak = peak_in_flight.load();
         n > peak && !peak_in_flight.compare_exchange_weak(peak, n);) {
    }
    auto* q = new query{this, std::move(work)};
    ares_query(channel, q->work.name.c_str(), class_in, wire_type(q->work.type),
               &impl::on_answer, q);
  }

  // Moves submitted work into the loop; returns whether to stop.
  bool take_inbox() {
    std::vector<job> jobs;
    std::vector<std::function<void()>> calls;
    bool stop = false;
    {
      std::lock_guard guard{inbox_mutex};
      jobs.swap(inbox);
      calls.swap(deliveries);
      stop = stopping;
    }
    for (auto& j : jobs)
      waiting.push_back(std::move(j));
    for (auto& f : calls)
      call_safely(f);
    return stop;
  }

  void run() {
    while (!take_inbox()) {
      while (in_flight < config.max_in_flight && !waiting.empty()) {
        auto work = std::move(waiting.front());
        waiting.pop_front();
        start(std::move(work));
      }
      std::vector<pollfd> fds{{wake_fd, POLLIN, 0}};
      for (auto [fd, events] : sockets)
        fds.push_back({fd, events, 0});
      timeval tv{};
      int timeout = -1;
      if (ares_timeout(channel, nullptr, &tv) != nullptr)
        timeout =
            static_cast<int>(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
      if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
        break;
      if (fds[0].revents != 0) {
        std::uint64_t count = 0;
        [[maybe_unused]] auto n = ::read(wake_fd, &count, sizeof count);
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        auto ev = fds[i].revents;
        if (ev == 0)
          continue;
        bool in = (ev & (POLLIN | POLLERR | POLLHUP)) != 0;
        bool out = (ev & POLLOUT) != 0;
        ares_process_fd(channel, in ? fds[i].fd : ARES_SOCKET_BAD,
                        out ? fds[i].fd : ARES_SOCKET_BAD);
      }
      ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    }
    {
      std::lock_guard guard{inbox_mutex};
      stopping = true; // also when poll failed: later calls answer at once
    }
    // Shutting down: every pending callback gets a time-out; a callback may
    // queue follow-up work, which fails the same way.
    ares_cancel(channel);
    for (;;) {
      take_inbox();
      if (waiting.empty())
        break;
      auto work = std::move(waiting.front());
      waiting.pop_front();
      --queued;
      call_safely(work.done, failed(rcode::timeout));
    }
    ares_destroy(channel);
    channel = nullptr;
    sockets.clear();
  }

  dns_resolver_config config;
  ares_channel channel = nullptr;
  int wake_fd = -1;
  std::thread thread;
  std::atomic<std::thread::id> loop_id{};

  std::mutex inbox_mutex;
  std::vector<job> inbox;
  std::vector<std::function<void()>> deliveries;
  bool stopping = false;

  // Loop thread only.
  std::deque<job> waiting;
  std::unordered_map<ares_socket_t, short> sockets;

  mutable std::mutex cache_mutex;
  core::dns::cache<route_callback> routes;
  core::dns::cache<route_callback> hosts; ///< MX host addresses.

  std::atomic<std::uint64_t> queries_sent{0};
  std::atomic<std::uint64_t> answers{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> in_flight{0};
  std::atomic<std::uint64_t> peak_in_flight{0};
  std::atomic<std::uint64_t> queued{0};
  std::atomic<std::uint64_t> route_requests{0};
  std::atomic<std::uint64_t> cache_hits{0};
  std::atomic<std::uint64_t> cache_misses{0};
  std::atomic<std::uint64_t> cache_joins{0};
};

dns_resolver::dns_resolver(std::unique_ptr<impl> self)
    : impl_(std::move(self)) {}

dns_resolver::~dns_resolver() {
  shutdown();
}

core::expected<std::unique_ptr<dns_resolver>>
dns_resolver::create(dns_resolver_config config) {
  using core::errc;
  using core::make_error;
  if (config.timeout.count() <= 0 || config.tries < 1 ||
      config.max_in_flight < 1)
    return make_error(errc::validation_failed,
                      "DNS timeout, tries and max in flight must be positive");
  if (auto status = ares_library_init(ARES_LIB_INIT_ALL);
      status != ARES_SUCCESS)
    return make_error(errc::internal,
                      std::string{"c-ares: "} + ares_strerror(status));
  auto self = std::make_unique<impl>(std::move(config));
  ares_options opts{};
  opts.timeout = static_cast<int>(self->config.timeout.count());
  opts.tries = self->config.tries;
  opts.sock_state_cb = &impl::on_socket_state;
  opts.sock_state_cb_data = self.get();
  // c-ares 1.18 turns a SERVFAIL or REFUSED from every server into
  // ECONNREFUSED; NOCHECKRESP hands the answer over, keeping its rcode.
  opts.flags = ARES_FLAG_NOCHECKRESP;
  int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB |
             ARES_OPT_FLAGS;
  if (auto status = ares_init_options(&self->channel, &opts, mask);
      status != ARES_SUCCESS)
    return make_error(errc::internal,
                      std::string{"c-ares: "} + ares_strerror(status));
  if (!self->config.servers.empty()) {
    std::string csv;
    for (const auto& s : self->config.servers)
      csv += (csv.empty() ? "" : ",") + s;
    if (auto status = ares_set_servers_ports_csv(self->channel, csv.c_str());
        status != ARES_SUCCESS)
      return make_error(errc::validation_failed,
                        "bad DNS server list '" + csv +
                            "': " + ares_strerror(status));
  }
  self->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (self->wake_fd < 0)
    return make_error(errc::internal, "DNS resolver: cannot create eventfd");
  auto* raw = self.get();
  raw->thread = std::thread{[raw] {
    raw->loop_id = std::this_thread::get_id();
    raw->run();
  }};
  return std::unique_ptr<dns_resolver>{new dns_resolver(std::move(self))};
}

void dns_resolver::resolve(std::string name, core::dns::record_type type,
                           lookup_callback callback) {
  impl_->submit({std::move(name), type, std::move(callback)});
}

void dns_resolver::resolve_mail_route(std::string domain,
                                      route_callback callback) {
  impl_->route(std::move(domain), std::move(callback));
}

void dns_resolver::resolve_host(std::string host, route_callback callback) {
  impl_->host(std::move(host), std::move(callback));
}

std::shared_ptr<const core::dns::mail_route>
dns_resolver::cached_route(std::string_view domain) {
  std::lock_guard guard{impl_->cache_mutex};
  auto found = impl_->routes.find(domain, impl_->now());
  if (found.status != core::dns::cache_status::hit)
    return nullptr;
  ++impl_->cache_hits;
  return std::move(found.route);
}

dns_resolver_counters dns_resolver::counters() const {
  dns_resolver_counters c;
  auto& m = *impl_;
  c.queries_sent = m.queries_sent;
  c.answers = m.answers;
  c.failures = m.failures;
  c.in_flight = m.in_flight;
  c.peak_in_flight = m.peak_in_flight;
  c.queued = m.queued;
  c.route_requests = m.route_requests;
  c.cache_hits = m.cache_hits;
  c.cache_misses = m.cache_misses;
  c.cache_joins = m.cache_joins;
  std::lock_guard guard{m.cache_mutex};
  c.cache_evictions = m.routes.stats().evictions;
  c.cache_size = m.routes.size();
  return c;
}

void dns_resolver::shutdown() {
  if (!impl_)
    return;
  {
    std::lock_guard guard{impl_->inbox_mutex};
    impl_->stopping = true;
  }
  impl_->wake();
  if (impl_->thread.joinable() &&
      impl_->thread.get_id() != std::this_thread::get_id())
    impl_->thread.join();
}

} // namespace mailassay::net
