#include "http/server.hpp"

#include "core/account/credentials.hpp"
#include "core/base/ascii.hpp"
#include "core/batch/job.hpp"
#include "http/admission.hpp"
#include "http/codec/error.hpp"
#include "http/credentials.hpp"
#include "http/deadline_list.hpp"
#include "http/errors.hpp"
#include "http/exchange_impl.hpp"
#include "http/gated_socket.hpp"
#include "http/handler_support.hpp"
#include "http/peer_watch.hpp"
#include "http/rate_limit.hpp"
#include "http/request_intake.hpp"
#include "http/router.hpp"
#include "http/services.hpp"
#include "http/upload_slots.hpp"
#include "log/log.hpp"
#include "security/random.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <future>
#include <pthread.h>
#include <sys/resource.h>
#include <thread>

namespace mailassay::http {

namespace {

// Requests are read through the body gate (gated_socket.hpp). Each event
// loop is one thread running its own io_context, so a connection needs no
// strand: answers from other threads are posted to its loop.
struct traits : restinio::default_single_thread_traits_t {
  using stream_socket_t = gated_socket;
  static constexpr bool use_connection_count_limiter = true;
};
using server_type = restinio::http_server_t<traits>;

// Whether a request of route `r` is answered 503 when too many wait: all
// but the probes of operators and orchestrators, which must answer most
// when the service is loaded.
bool sheddable(const route& r) {
  std::string_view p = r.pattern;
  return p != "/health" && p != "/status" && p != "/metrics";
}

// The error kind of a status the body gate refuses with.
core::errc refusal_kind(int status) {
  switch (status) {
    case 408: return core::errc::request_timeout;
    case 413: return core::errc::payload_too_large;
    case 414: return core::errc::uri_too_long;
    case 431: return core::errc::header_too_large;
    case 501: return core::errc::not_implemented;
    case 505: return core::errc::version_not_supported;
    default: return core::errc::bad_request;
  }
}

// One event loop: an io_context run by one thread, with its own listening
// socket on the shared port (SO_REUSEPORT when there are several: the kernel
// spreads connections over them) and its own deadline timer. Loops share
// nothing on the request path but the services, so they never contend for a
// lock of asio's.
struct event_loop : std::enable_shared_from_this<event_loop> {
  // Sockets and the timer are only used on the loop's thread (other threads
  // post to it), so the reactor's per-socket locks are left out; posting
  // stays locked.
  asio::io_context ioctx{ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  std::shared_ptr<deadline_list> deadlines;
  gate_service* gates = nullptr; ///< The gated sockets' service of `ioctx`.
  std::unique_ptr<server_type> srv;
  std::unique_ptr<restinio::on_pool_runner_t<server_type>> runner;
  /// Set once its thread stopped: a continuation for one of its requests
  /// is dropped instead of posted (nothing would run it).
  std::atomic<bool> stopped{false};

  explicit event_loop(std::atomic<std::int64_t>& waiting)
      : deadlines(std::make_shared<deadline_list>(ioctx, waiting)) {}

  ~event_loop() {
    // The timer goes before the I/O context it was made on.
    deadlines->close();
  }
};

// What exchanges ask of the service when they answer: the RateLimit headers
// of the request's key or client IP, and the usage recorder.
struct service_hooks final : exchange_hooks {
  const services& svc;

  explicit service_hooks(const services& s) : svc(s) {}

  rate_headers
  unmetered_rate(const request_view& req,
                 const core::account::api_key* key) const override {
    return http::unmetered_rate(svc, req, key);
  }

  void record_usage(std::shared_ptr<const core::account::api_key> key, bool ok,
                    std::string address) const override {
    svc.usage.record_key(std::move(key), svc.now(), ok, 0, std::move(address));
  }
};

using reuse_port =
    asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

} // namespace

struct server::impl {
  services& svc;
  service_hooks hooks{svc};
  // Uploads whose body is read now (issue #28), shared by every loop.
  std::shared_ptr<upload_slots> uploads_by_org = std::make_shared<upload_slots>(
      svc.cfg.batch.max_concurrent_uploads_per_organization);
  std::shared_ptr<upload_slots> uploads_by_ip = std::make_shared<upload_slots>(
      svc.cfg.batch.max_concurrent_uploads_per_ip);
  // Shared with every request the loop read (exchange::impl::loop): its
  // io_context, RESTinio server and connections outlive the requests, which
  // storage workers or actors may still hold once the server stopped.
  std::vector<std::shared_ptr<event_loop>> loops;
  bool running = false;
  std::string id_prefix = security::random_base62(6);
  std::atomic<std::uint64_t> next_id{0};
  /// From a request's arrival to the 503 its deadline answers.
  std::chrono::milliseconds request_timeout{0};

  explicit impl(services& s) : svc(s) {
    svc.stats.add_gauge(
        "mailassay_uploads_reading",
        "Batch uploads admitted whose body is being read now (at most "
        "batch.max_concurrent_uploads_per_organization per organization).",
        [slots = uploads_by_org] {
          return static_cast<double>(slots->total());
        });
    svc.stats.add_gauge_family(
        "mailassay_http_shed",
        "Requests answered 503 with Retry-After at once since the start, "
        "because the queue they would wait on was full.",
        [&shed = svc.shed] {
          std::vector<std::pair<std::string, double>> out;
          for (auto q : {queue::requests, queue::storage, queue::validation})
            out.emplace_back(std::string{"queue=\""} + queue_name(q) + "\"",
                             static_cast<double>(shed.of(q)));
          return out;
        });
    svc.stats.add_gauge(
        "mailassay_http_waiting",
        "Requests waiting for an answer now (bounded by "
        "http.max_waiting_requests).",
        [&w = svc.waiting] { return static_cast<double>(w.load()); });
  }

  restinio::request_handling_status_t
  on_request(event_loop& loop, restinio::request_handle_t req) {
    auto ex = exchange::create();
    auto* p = &ex->state();
    p->started = std::chrono::steady_clock::now();
    p->body_refused = fill_view(p->view, req, svc);
    p->req = std::move(req);
    p->stats = &svc.stats;
    p->in_flight = &svc.in_flight;
    p->deadlines = loop.deadlines.get();
    p->deadline_at = p->started + request_timeout;
    p->home = &loop.ioctx;
    p->home_stopped = &loop.stopped;
    p->loop = loop.shared_from_this();
    auto incoming = p->view.header("X-Request-Id");
    if (incoming && usable_request_id(*incoming))
      p->id = std::string{*incoming};
    else
      p->id = fresh_request_id();
    // RateLimit-* of answers no limiter check decided, and usage records
    // (exchange::respond).
    p->hooks = &hooks;
    auto m = match_route(p->view.method, p->view.path);
    p->route = m.found ? m.found->pattern : "unmatched";
    p->view.params = std::move(m.params);
    svc.in_flight++;
    auto* socket = loop.gates->parsing;
    dispatch(loop, ex, m);
    // Waiting: a client that goes meanwhile ends it (and its work) at once.
    if (socket && !ex->answered())
      watch_peer(socket->lowest_layer(), [weak = std::weak_ptr<exchange>(ex)] {
        if (auto ex = weak.lock())
          ex->client_gone();
      });
    return restinio::request_accepted();
  }

  // The whole answer to a request the body gate refused before RESTinio
  // parsed it (gated_socket.hpp): the spec's error body with every header
  // an answer carries (request id, RateLimit of the client IP, nosniff),
  // `Connection: close`; counted and logged like any answer.
  std::string refusal(const asio::ip::address& peer, int status,
                      const std::string& message) {
    return refusal_of(peer, core::make_error(refusal_kind(status), message),
                      "malformed");
  }

  // The same for error `e` of route `route`.
  std::string refusal_of(const asio::ip::address& peer, const core::error& e,
                         const char* route) {
    std::string text;
    auto ex = exchange::create();
    auto& p = ex->state();
    p.started = std::chrono::steady_clock::now();
    p.view.method = "-";
    p.view.peer_ip =
        peer.is_v4() ? dotted_quad(peer.to_v4()) : peer.to_string();
    // Nothing of the head is believed, X-Forwarded-For neither.
    p.view.client_ip = p.view.peer_ip;
    p.view.index_headers();
    p.id = fresh_request_id();
    p.route = route;
    p.hooks = &hooks;
    p.stats = &svc.stats;
    p.close_connection = true;
    p.raw_out = &text;
    ex->fail(e);
    return text;
  }

  // Decides on an upload's head before its body is read (issue #28): the
  // client address's slot, the credentials and the key's rights, the
  // organization's active job and its slot, as the upload's handler will
  // (which still decides: two uploads may both pass here). Storage answers
  // on a worker; `done` is called there.
  void admit_upload(std::string head, const asio::ip::address& peer,
                    std::function<void(gate_service::upload_admission)> done) {
    auto peer_text =
        peer.is_v4() ? dotted_quad(peer.to_v4()) : peer.to_string();
    int forwarded = 0;
    auto xff = head_field(head, "X-Forwarded-For", forwarded);
    auto client =
        svc.trusted_proxies.empty()
            ? peer_text
            : core::limits::client_ip(peer_text, xff, svc.trusted_proxies);
    auto refuse = [this, peer, done](const core::error& e) {
      done({refusal_of(peer, e, "/v2/batch/upload"), nullptr});
    };
    auto busy = [](const char* whose) {
      auto e = core::make_error(
          core::errc::rate_limited,
          std::string{"Too many uploads in progress for this "} + whose +
              ": wait until one of them is read");
      e.retry_after = 5;
      return e;
    };
    auto ip_slot = uploads_by_ip->take(client);
    if (!ip_slot)
      return refuse(busy("client address"));
    // The head moves into the job; the credentials view into its copy.
    auto owned = std::make_shared<const std::string>(std::move(head));
    auto field = [&owned](std::string_view name) {
      int n = 0;
      auto v = head_field(*owned, name, n);
      return std::make_pair(n, v);
    };
    auto [authorizations, auth] = field("Authorization");
    if (authorizations > 1)
      return refuse(core::make_error(core::errc::bad_request,
                                     "Send one Authorization header"));
    auto present = [](const std::pair<int, std::string_view>& f) {
      return f.first > 0 ? std::optional<std::string_view>{f.second}
                         : std::nullopt;
    };
    auto creds =
        credentials_from(present({authorizations, auth}),
                         present(field("Origin")), present(field("Referer")));
    svc.storage.submit({[this, owned, creds, refuse, busy, done,
                         ip_slot](actors::job_context& ctx) mutable {
      // Without storage the handler answers (503); nothing to decide here.
      if (!ctx.db)
        return done({"", ip_slot});
      auto env = ctx.env(svc.now());
      auto who = use_cases::accounts::authenticate(env, creds);
      if (!who)
        return refuse(who.error_value());
      if (auto refused = key_use_refusal(*who, core::account::key_use::account))
        return refuse(*refused);
      auto jobs =
          env.db.list_batch_jobs(who->organization_id(), 2, std::nullopt);
      if (jobs)
        for (const auto& j : *jobs)
          if (core::batch::is_active(j.status))
            return refuse(core::make_error(
                core::errc::active_job_exists,
                "A batch job is already running for this organization"));
      auto org_slot = uploads_by_org->take(who->organization_id());
      if (!org_slot)
        return refuse(busy("organization"));
      // Both slots, held while the body is read.
      auto both = std::make_shared<
          std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(
          std::move(ip_slot), std::move(org_slot));
      done({"", both});
    }});
  }

  // "<prefix>-<n>": short enough to need no allocation.
  std::string fresh_request_id() {
    std::array<char, 40> buf;
    auto* end = std::copy(id_prefix.begin(), id_prefix.end(), buf.data());
    *end++ = '-';
    end = std::to_chars(end, buf.data() + buf.size(), ++next_id).ptr;
    return std::string(buf.data(), end);
  }

  void dispatch(event_loop& loop, const exchange_ptr& ex,
                const route_match& m) {
    using core::errc;
    using core::make_error;
    const auto& req = ex->request();
    // The gate dropped the rest of a refused body: the connection cannot
    // carry another request, whatever the answer.
    if (ex->state().body_refused)
      ex->state().close_connection = true;
    if (svc.draining)
      return ex->fail(
          make_error(errc::unavailable, "The server is shutting down"));
    if (ex->state().body_refused)
      return ex->fail(body_refusal(svc, m.found));
    if (!m.found) {
      if (m.allow.empty())
        return ex->fail(
            make_error(errc::not_found, "Cannot " + std::string{req.method} +
                                            " " + std::string{req.path}));
      if (req.method == "OPTIONS")
        return ex->respond(options(req, m.allow));
      response r{405,
                 codec::error_body(make_error(
                     errc::method_not_allowed,
                     "Method " + std::string{req.method} + " not allowed on " +
                         std::string{req.path})),
                 "application/json",
                 {{"Allow", m.allow}}};
      return ex->respond(std::move(r));
    }
    auto limit =
        m.found->max_body ? m.found->max_body : svc.cfg.http.max_body_bytes;
    if (static_cast<std::int64_t>(req.body.size()) > limit)
      return ex->fail(make_error(errc::payload_too_large,
                                 "Request body exceeds the limit of " +
                                     std::to_string(limit) + " bytes"));
    if (auto e = read_query(ex->state().view, m.found->query))
      return ex->fail(*e);
    // The service's own probes are answered whatever the load.
    if (sheddable(*m.found) && full(svc.waiting.load(std::memory_order_relaxed),
                                    svc.cfg.http.max_waiting_requests)) {
      svc.shed.add(queue::requests);
      return ex->fail(overloaded(queue::requests));
    }
    // Two credentials: which one would be meant is anyone's guess, and a
    // proxy and the service might each read another one.
    if (req.header_count("Authorization") > 1)
      return ex->fail(
          make_error(errc::bad_request,
                     "A request may carry only one Authorization header"));
    m.found->fn(call{ex, &svc});
    // Unanswered yet: an actor or another thread answers it later, or the
    // deadline does.
    if (!ex->answered())
      loop.deadlines->add(*ex);
  }

  // OPTIONS lists a path's methods. Only the widget's route is meant for
  // pages on other sites, so only it answers a CORS preflight: browsers ask
  // before a cross-origin POST with Authorization, and the answer cannot
  // depend on the key (a preflight carries none); the real request is then
  // checked against the key's allowedDomains. Every other route stays
  // same-origin: its OPTIONS has no Access-Control-* field, so a browser
  // refuses the cross-origin call.
  static response options(const request_view& req, const std::string& allow) {
    response r{204, {}, "", {{"Allow", allow}}};
    auto post = match_route("POST", req.path);
    bool widget =
        post.found && post.found->traits == route_traits::cross_origin;
    if (auto origin = req.header("Origin"); origin && widget) {
      r.headers.emplace_back("Access-Control-Allow-Origin",
                             std::string{*origin});
      r.headers.emplace_back("Access-Control-Allow-Methods", allow);
      r.headers.emplace_back("Access-Control-Allow-Headers",
                             "Authorization, Content-Type, X-Device-Id, "
                             "X-Request-Id");
      r.headers.emplace_back("Access-Control-Max-Age", "600");
      r.headers.emplace_back("Vary", "Origin");
    }
    return r;
  }

  // Open connections each of `loops` loops may hold: the configured total,
  // or what the open-file limit leaves after the service's own descriptors.
  std::size_t connections_per_loop(std::size_t loops) const {
    auto total = svc.cfg.http.max_connections;
    if (total == 0) {
      rlimit files{};
      total = ::getrlimit(RLIMIT_NOFILE, &files) == 0 &&
                      files.rlim_cur != RLIM_INFINITY
                  ? std::max<std::int64_t>(
                        64, static_cast<std::int64_t>(files.rlim_cur) - 256)
                  : 10000;
    }
    return static_cast<std::size_t>(
        std::max<std::int64_t>(1, total / static_cast<std::int64_t>(loops)));
  }

  // Opens loop `i` and starts its thread; throws when it cannot listen.
  void open_loop(std::size_t i, bool shared_port) {
    auto& loop = *loops[i];
    auto upload_limit = static_cast<std::uint64_t>(
        svc.cfg.batch.max_file_bytes + multipart_allowance);
    auto& gate = asio::use_service<gate_service>(loop.ioctx);
    loop.gates = &gate;
    gate.limits = body_limits{upload_limit, hard_body_limit};
    gate.head =
        head_limits{static_cast<std::size_t>(svc.cfg.http.max_head_bytes),
                    static_cast<std::size_t>(svc.cfg.http.max_header_fields)};
    gate.read_timeout = std::chrono::milliseconds(svc.cfg.http.read_timeout_ms);
    gate.render = [this](const asio::ip::address& peer, int status,
                         const std::string& message) {
      return refusal(peer, status, message);
    };
    gate.limits.check_uploads = true;
    gate.admit_upload =
        [this](std::string head, const asio::ip::address& peer,
               std::function<void(gate_service::upload_admission)> done) {
          admit_upload(std::move(head), peer, std::move(done));
        };
    restinio::server_settings_t<traits> settings;
    settings.address(svc.cfg.http.address)
        .port(svc.cfg.http.port)
        .max_parallel_connections(connections_per_loop(loops.size()))
        .acceptor_options_setter([shared_port](auto& options) {
          options.set_option(asio::ip::tcp::acceptor::reuse_address(true));
          if (shared_port)
            options.set_option(reuse_port(true));
        })
        // Never reached: the gate refuses larger bodies first (RESTinio would
        // close without an answer).
        .incoming_http_msg_limits(
            restinio::incoming_http_msg_limits_t{}.max_body_size(
                std::max(hard_body_limit, upload_limit)))
        // Our own deadline answers first; RESTinio's only reaps what is left.
        .handle_request_timeout(
            std::chrono::milliseconds(svc.cfg.http.request_timeout_ms + 5000))
        // The gate answers a request late by http.read_timeout_ms with 408;
        // RESTinio's timer, a little longer, only closes idle connections.
        .read_next_http_message_timelimit(
            std::chrono::milliseconds(svc.cfg.http.read_timeout_ms + 5000))
        .write_http_response_timelimit(std::chrono::seconds(30))
        .request_handler([this, &loop](restinio::request_handle_t req) {
          return on_request(loop, std::move(req));
        });
    loop.srv = std::make_unique<server_type>(
        restinio::external_io_context(loop.ioctx), std::move(settings));
    loop.runner =
        std::make_unique<restinio::on_pool_runner_t<server_type>>(1, *loop.srv);
    // Named for top -H and the tests: posted before the runner starts, so
    // it is the loop thread's first job, before the port is opened (a client
    // can reach a loop as soon as it listens).
    asio::post(loop.ioctx, [name = "http-io-" + std::to_string(i)] {
      ::pthread_setname_np(::pthread_self(), name.c_str());
    });
    std::promise<void> started;
    auto result = started.get_future();
    loop.runner->start([&started]() noexcept { started.set_value(); },
                       [&started](std::exception_ptr e) noexcept {
                         started.set_exception(e);
                       });
    result.get();
  }

  // `answer_waiting`: requests still waiting (past the drain's grace) get
  // their 503 while their loops still write, and their work is cancelled
  // (issue #29); not after a failed start, whose loops may not all run.
  void stop_loops(bool answer_waiting) {
    std::vector<std::future<void>> answered;
    for (auto& loop : loops) {
      if (!loop->runner || !answer_waiting)
        continue;
      auto done = std::make_shared<std::promise<void>>();
      answered.push_back(done->get_future());
      asio::post(loop->ioctx, [loop, done] {
        loop->deadlines->fail_all(core::make_error(
            core::errc::unavailable, "The server is shutting down"));
        done->set_value();
      });
    }
    for (auto& f : answered)
      f.wait_for(std::chrono::seconds(5));
    for (auto& loop : loops)
      if (loop->runner)
        loop->runner->stop();
    for (auto& loop : loops)
      if (loop->runner) {
        loop->runner->wait();
        loop->runner.reset();
        loop->stopped.store(true);
      }
    for (auto& loop : loops)
      loop->deadlines->close();
  }
};

server::server(services& svc) : impl_(std::make_unique<impl>(svc)) {}

server::~server() {
  if (impl_->running)
    drain_and_stop(0);
}

std::string server::start() {
  auto& s = *impl_;
  auto n = static_cast<std::size_t>(std::max(1, s.svc.cfg.http.io_threads));
  std::chrono::milliseconds timeout(s.svc.cfg.http.request_timeout_ms);
  s.request_timeout = timeout;
  for (std::size_t i = 0; i < n; ++i)
    s.loops.push_back(std::make_shared<event_loop>(s.svc.waiting));
  try {
    for (std::size_t i = 0; i < n; ++i)
      s.open_loop(i, n > 1);
  } catch (const std::exception& e) {
    s.stop_loops(false);
    s.loops.clear();
    return std::string{"cannot listen on "} + s.svc.cfg.http.address + ":" +
           std::to_string(s.svc.cfg.http.port) + ": " + e.what();
  }
  s.running = true;
  return {};
}

void server::drain_and_stop(int grace_ms) {
  auto& s = *impl_;
  if (!s.running)
    return;
  s.running = false;
  s.svc.draining = true;
  auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (s.svc.in_flight.load() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  s.stop_loops(true);
}

} // namespace mailassay::http
