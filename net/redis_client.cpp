#include "net/redis_client.hpp"

#include "net/io_thread.hpp"
#include "net/redis_asio.hpp"

#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sys/socket.h>

namespace mailassay::net {

namespace {

using clock = std::chrono::steady_clock;

std::string sha1_hex(std::string_view text) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  ::SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
         digest);
  std::string out;
  char buf[3];
  for (auto b : digest) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

} // namespace

redis_script::redis_script(std::string t)
    : text(std::move(t)), sha1(sha1_hex(text)) {}

bool is_error_reply(const redisReply* reply, std::string_view prefix) {
  if (!reply || reply->type != REDIS_REPLY_ERROR)
    return false;
  std::string_view text{reply->str, reply->len};
  return text.substr(0, prefix.size()) == prefix;
}

struct redis_client::impl {
  enum class phase { connecting, handshake, up, down, stopped };

  explicit impl(asio::io_context& io)
      : io(io), adapter(io), retry(io), reply_timer(io), resolver(io) {}

  // One command in flight: who to tell.
  struct pending {
    impl* owner;
    reply_fn done;
  };

  asio::io_context& io;
  redis_options opts;
  state_fn on_state;
  redis_counters* counters = nullptr;
  std::weak_ptr<redis_client> owner;

  redisAsyncContext* ac = nullptr;
  redis_asio adapter; // the context's socket in the loop's reactor
  asio::steady_timer retry;
  asio::steady_timer reply_timer;
  asio::ip::tcp::resolver resolver;
  phase ph = phase::down;
  std::chrono::milliseconds backoff{100};
  // Send times of the commands in flight, oldest first: replies come back
  // in order, so the front is the next one due.
  std::deque<clock::time_point> sent;
  bool timer_armed = false;
  bool told_down = false; // on_state(false) ran since the last `up`

  // hiredis freed the context (hiredis closes the socket right after).
  // hiredis runs this before the disconnect callback, so a connection the
  // server closed is reported here (once: report_down ignores a connection
  // already reported by `drop` or the connect callback).
  void gone(const redisAsyncContext* c) {
    std::string why = c && c->err && c->errstr
                          ? std::string{c->errstr}
                          : std::string{"connection closed"};
    ac = nullptr;
    report_down(why);
    connection_gone();
  }

  // -- connection -----------------------------------------------------------

  void connect() {
    ph = phase::connecting;
    asio::error_code ec;
    auto ip = asio::ip::make_address(opts.endpoint.host, ec);
    if (!ec)
      return open(ip.to_string());
    // Names are looked up off the loop (asio's resolver thread), so a slow
    // resolver never holds the commands of this loop.
    auto self = owner.lock();
    resolver.async_resolve(
        opts.endpoint.host, std::to_string(opts.endpoint.port),
        [this, self](const asio::error_code& ec,
                     asio::ip::tcp::resolver::results_type results) {
          if (ph != phase::connecting)
            return;
          if (ec || results.empty())
            return failed("cannot resolve " + opts.endpoint.host + ": " +
                          ec.message());
          open(results.begin()->endpoint().address().to_string());
        });
  }

  void open(const std::string& ip) {
    ac = redisAsyncConnect(ip.c_str(), opts.endpoint.port);
    if (!ac)
      return failed("out of memory");
    if (ac->err) {
      std::string why = ac->errstr;
      redisAsyncFree(ac);
      ac = nullptr;
      return failed(why);
    }
    ac->data = this;
    adapter.attach(ac, owner, [this](const redisAsyncContext* c) { gone(c); });
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    // Also asks to write: the socket becoming writable ends the connect.
    redisAsyncSetConnectCallback(ac, on_connect);
  }

  static void on_connect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<impl*>(c->data);
    if (status != REDIS_OK) {
      // hiredis frees the context next (cleanup reconnects).
      self->report_down(c->errstr ? c->errstr : "connection refused");
      return;
    }
    self->handshake();
  }

  static void on_disconnect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<impl*>(c->data);
    if (self->ph != phase::stopped)
      self->report_down(status == REDIS_OK || !c->errstr
                            ? "connection closed"
                            : std::string{c->errstr});
  }

  void handshake() {
    ph = phase::handshake;
    const auto& e = opts.endpoint;
    auto check = [this](const redisReply* r) {
      if (!r || r->type == REDIS_REPLY_ERROR)
        drop(r ? std::string{r->str, r->len} : "no reply to the handshake");
    };
    if (!e.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!e.user.empty())
        auth.push_back(e.user);
      auth.push_back(e.password);
      send(std::move(auth), check);
    }
    if (e.db != 0)
      send({"SELECT", std::to_string(e.db)}, check);
    send({"PING"}, [this](const redisReply* r) {
      if (!r || r->type == REDIS_REPLY_ERROR || ph != phase::handshake)
        return;
      ph = phase::up;
      backoff = opts.min_backoff;
      counters->connects.fetch_add(1, std::memory_order_relaxed);
      counters->up.store(true);
      told_down = false;
      if (on_state)
        on_state(true, {});
    });
  }

  // The connection failed or was lost: note it once, then (from cleanup)
  // reconnect later.
  void report_down(const std::string& why) {
    bool was_up =
        ph == phase::up || ph == phase::handshake || ph == phase::connecting;
    counters->up.store(false);
    if (ph == phase::stopped)
      return;
    ph = phase::down;
    if (was_up) {
      counters->failures.fetch_add(1, std::memory_order_relaxed);
      // Told once per outage, not at every failed reconnection attempt.
      if (on_state && !told_down)
        on_state(false, why);
      told_down = true;
    }
  }

  void failed(const std::string& why) {
    report_down(why);
    connection_gone();
  }

  // The context is gone: try again after the back-off.
  void connection_gone() {
    sent.clear();
    if (ph == phase::stopped)
      return;
    ph = phase::down;
    counters->up.store(false);
    auto self = owner.lock();
    retry.expires_after(backoff);
    backoff = std::min(backoff * 2, opts.max_backoff);
    retry.async_wait([this, self](const asio::error_code& ec) {
      if (!ec && ph == phase::down && !ac)
        connect();
    });
  }

  // Abandons the connection: every pending command gets no reply.
  void drop(const std::string& why) {
    if (!ac)
      return;
    report_down(why);
    redisAsyncFree(ac); // cleanup (now or after the running callback)
  }

  // -- commands ---------------------------------------------------------------

  static void on_reply(redisAsyncContext*, void* r, void* priv) {
    std::unique_ptr<pending> p{static_cast<pending*>(priv)};
    auto* self = p->owner;
    if (!self->sent.empty())
      self->sent.pop_front();
    if (!r)
      self->counters->unanswered.fetch_add(1, std::memory_order_relaxed);
    p->done(static_cast<const redisReply*>(r));
  }

  void send(std::vector<std::string> argv, reply_fn done) {
    if (!ac || (ph != phase::up && ph != phase::handshake)) {
      counters->unanswered.fetch_add(1, std::memory_order_relaxed);
      return done(nullptr);
    }
    std::vector<const char*> ptrs;
    std::vector<std::size_t> lens;
    ptrs.reserve(argv.size());
    lens.reserve(argv.size());
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* p = new pending{this, std::move(done)};
    if (redisAsyncCommandArgv(ac, on_reply, p, static_cast<int>(argv.size()),
                              ptrs.data(), lens.data()) != REDIS_OK) {
      std::unique_ptr<pending> lost{p};
      counters->unanswered.fetch_add(1, std::memory_order_relaxed);
      return lost->done(nullptr);
    }
    counters->commands.fetch_add(1, std::memory_order_relaxed);
    sent.push_back(clock::now());
    if (!timer_armed)
      arm_timer();
  }

  void arm_timer() {
    if (sent.empty()) {
      timer_armed = false;
      return;
    }
    timer_armed = true;
    auto self = owner.lock();
    reply_timer.expires_at(sent.front() + opts.timeout);
    reply_timer.async_wait([this, self](const asio::error_code& ec) {
      timer_armed = false;
      if (ec || ph == phase::stopped)
        return;
      if (!sent.empty() && clock::now() - sent.front() >= opts.timeout) {
        counters->timeouts.fetch_add(1, std::memory_order_relaxed);
        return drop("no reply within " + std::to_string(opts.timeout.count()) +
                    " ms");
      }
      arm_timer();
    });
  }

  void stop() {
    ph = phase::stopped;
    counters->up.store(false);
    retry.cancel();
    reply_timer.cancel();
    resolver.cancel();
    if (ac)
      redisAsyncFree(ac);
    adapter.detach();
  }
};

redis_client::redis_client(asio::io_context& ioctx)
    : impl_(std::make_unique<impl>(ioctx)) {}

redis_client::~redis_client() = default;

std::shared_ptr<redis_client> redis_client::start(asio::io_context& ioctx,
                                                  redis_options opts,
                                                  state_fn on_state) {
  std::shared_ptr<redis_client> c{new redis_client(ioctx)};
  auto& p = *c->impl_;
  p.opts = std::move(opts);
  p.backoff = p.opts.min_backoff;
  p.on_state = std::move(on_state);
  p.counters = &c->counters_;
  p.owner = c;
  asio::post(ioctx, [c] { c->impl_->connect(); });
  return c;
}

void redis_client::command(std::vector<std::string> argv, reply_fn done) {
  // Down: answer at once, on the caller's thread, without a hop.
  if (!up()) {
    counters_.unanswered.fetch_add(1, std::memory_order_relaxed);
    return done(nullptr);
  }
  auto& p = *impl_;
  if (p.io.get_executor().running_in_this_thread())
    return p.send(std::move(argv), std::move(done));
  asio::post(p.io, [self = shared_from_this(), argv = std::move(argv),
                    done = std::move(done)]() mutable {
    self->impl_->send(std::move(argv), std::move(done));
  });
}

void redis_client::eval(std::shared_ptr<const redis_script> script,
                        std::vector<std::string> keys,
                        std::vector<std::string> args, reply_fn done) {
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.push_back("EVALSHA");
  argv.push_back(script->sha1);
  argv.push_back(std::to_string(keys.size()));
  for (auto& k : keys)
    argv.push_back(std::move(k));
  for (auto& a : args)
    argv.push_back(std::move(a));
  auto retry_argv = std::make_shared<std::vector<std::string>>(argv);
  command(std::move(argv), [self = shared_from_this(), script, retry_argv,
                            done = std::move(done)](const redisReply* r) {
    if (!is_error_reply(r, "NOSCRIPT"))
      return done(r);
    // The server lost its script cache (restart, SCRIPT FLUSH): send the
    // text once; EVAL caches it again for the following EVALSHAs.
    (*retry_argv)[0] = "EVAL";
    (*retry_argv)[1] = script->text;
    self->impl_->send(std::move(*retry_argv), done);
  });
}

void redis_client::stop() {
  run_on_loop(impl_->io, [self = shared_from_this()] { self->impl_->stop(); });
}

void redis_client::drop_connection() {
  asio::post(impl_->io, [self = shared_from_this()] {
    auto& p = *self->impl_;
    if (p.ac && p.ac->c.fd >= 0)
      ::shutdown(p.ac->c.fd, SHUT_RDWR);
  });
}

} // namespace mailassay::net
