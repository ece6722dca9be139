#include "net/dns_loop.hpp"

#include "net/dns_wire.hpp"

#include <ares.h>

#include <atomic>
#include <cerrno>
#include <deque>
#include <mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace mailassay::net {

namespace {

constexpr int class_in = 1; // RFC 1035 §3.2.4

struct job {
  std::string name;
  core::dns::record_type type = core::dns::record_type::mx;
  dns_loop::answer_callback done;
};

core::dns::lookup_result timed_out() {
  core::dns::lookup_result r;
  r.code = core::dns::rcode::timeout;
  return r;
}

} // namespace

struct dns_loop::impl {
  struct query {
    impl* self;
    job work;
  };

  explicit impl(dns_loop_settings s) : settings(std::move(s)) {}

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
    call_guarded(work.done, timed_out());
  }

  // Any thread.
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
    call_guarded(f);
  }

  static void on_answer(void* arg, int status, int, unsigned char* abuf,
                        int alen) {
    std::unique_ptr<query> q{static_cast<query*>(arg)};
    auto& self = *q->self;
    --self.in_flight;
    auto result = dns_wire::read_answer(status, q->work.type, abuf, alen);
    if (core::dns::is_failure(result.code))
      ++self.failures;
    else
      ++self.answers;
    call_guarded(q->work.done, std::move(result));
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
    ares_query(channel, q->work.name.c_str(), class_in,
               dns_wire::type_code(q->work.type), &impl::on_answer, q);
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
      call_guarded(f);
    return stop;
  }

  void run() {
    while (!take_inbox()) {
      while (in_flight < settings.max_in_flight && !waiting.empty()) {
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
      call_guarded(work.done, timed_out());
    }
    ares_destroy(channel);
    channel = nullptr;
    sockets.clear();
  }

  dns_loop_settings settings;
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

  std::atomic<std::uint64_t> queries_sent{0};
  std::atomic<std::uint64_t> answers{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> in_flight{0};
  std::atomic<std::uint64_t> peak_in_flight{0};
  std::atomic<std::uint64_t> queued{0};
};

dns_loop::dns_loop(std::unique_ptr<impl> self) : impl_(std::move(self)) {}

dns_loop::~dns_loop() {
  shutdown();
}

core::expected<std::unique_ptr<dns_loop>>
dns_loop::create(dns_loop_settings settings) {
  using core::errc;
  using core::make_error;
  if (settings.timeout.count() <= 0 || settings.tries < 1 ||
      settings.max_in_flight < 1)
    return make_error(errc::validation_failed,
                      "DNS timeout, tries and max in flight must be positive");
  if (auto status = ares_library_init(ARES_LIB_INIT_ALL);
      status != ARES_SUCCESS)
    return make_error(errc::internal,
                      std::string{"c-ares: "} + ares_strerror(status));
  auto self = std::make_unique<impl>(std::move(settings));
  ares_options opts{};
  opts.timeout = static_cast<int>(self->settings.timeout.count());
  opts.tries = self->settings.tries;
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
  if (!self->settings.servers.empty()) {
    std::string csv;
    for (const auto& s : self->settings.servers)
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
  return std::unique_ptr<dns_loop>{new dns_loop(std::move(self))};
}

void dns_loop::query(std::string name, core::dns::record_type type,
                     answer_callback done) {
  impl_->submit({std::move(name), type, std::move(done)});
}

void dns_loop::post(std::function<void()> f) {
  impl_->deliver(std::move(f));
}

dns_loop_counters dns_loop::counters() const {
  dns_loop_counters c;
  c.queries_sent = impl_->queries_sent;
  c.answers = impl_->answers;
  c.failures = impl_->failures;
  c.in_flight = impl_->in_flight;
  c.peak_in_flight = impl_->peak_in_flight;
  c.queued = impl_->queued;
  return c;
}

void dns_loop::shutdown() {
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
