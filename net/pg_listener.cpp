#include "net/pg_listener.hpp"

#include "net/io_thread.hpp"

#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <deque>
#include <libpq-fe.h>
#include <sys/socket.h>

namespace mailassay::net {

namespace {

// libpq prints server NOTICEs to stderr otherwise.
void quiet(void*, const char*) {}

using wait_type = asio::posix::stream_descriptor::wait_type;

} // namespace

struct pg_listener::impl {
  enum class phase { connecting, subscribing, listening, waiting, stopped };

  impl(asio::io_context& io) : io(io), sd(io), retry(io), deadline(io) {}

  asio::io_context& io;
  pg_listener_options opts;
  payload_fn on_payload;
  listening_fn on_listening;
  failure_fn on_failure;
  pg_listener_counters* counters = nullptr;
  std::weak_ptr<pg_listener> owner;

  PGconn* conn = nullptr;
  // Follows the connection's socket; released (never closed) before
  // libpq closes it.
  asio::posix::stream_descriptor sd;
  asio::steady_timer retry;
  asio::steady_timer deadline;
  phase ph = phase::waiting;
  std::chrono::milliseconds backoff{100};
  bool ever_listened = false;
  // Bumped whenever the socket is re-attached or closed: a wait started
  // before belongs to a connection that is gone.
  std::uint64_t epoch = 0;
  // Payloads to send (`notify`), oldest first; one pg_notify in flight.
  std::deque<std::string> outbox;
  // A command (LISTEN, pg_notify) was sent and its results are not all
  // read: libpq takes no other until then.
  bool busy = false;
  bool flushing = false; // a write wait for the outgoing query is armed

  // Runs `f()` when the socket is ready for `what`, unless the connection
  // changed or the listener stopped meanwhile.
  template <class F>
  void wait(wait_type what, F f) {
    auto self = owner.lock();
    auto at = epoch;
    sd.async_wait(what, [this, self, at, f](const asio::error_code& ec) {
      if (ec == asio::error::operation_aborted || at != epoch ||
          ph == phase::stopped)
        return;
      f();
    });
  }

  // Points the descriptor at the connection's current socket: libpq may
  // open a new one while connecting (another address, SSL retry), even
  // under the same number, so it is re-registered every time.
  void attach() {
    ++epoch;
    if (sd.is_open())
      sd.release();
    auto fd = PQsocket(conn);
    if (fd >= 0)
      sd.assign(fd);
  }

  void close() {
    ++epoch;
    outbox.clear();
    busy = flushing = false;
    deadline.cancel();
    if (sd.is_open())
      sd.release();
    if (conn) {
      PQfinish(conn);
      conn = nullptr;
    }
  }

  void connect() {
    ph = phase::connecting;
    conn = PQconnectStart(opts.conninfo.c_str());
    if (!conn)
      return fail("out of memory");
    if (PQstatus(conn) == CONNECTION_BAD)
      return fail(PQerrorMessage(conn));
    PQsetNoticeProcessor(conn, quiet, nullptr);
    auto self = owner.lock();
    deadline.expires_after(opts.connect_timeout);
    deadline.async_wait([this, self](const asio::error_code& ec) {
      if (!ec && ph == phase::connecting && conn)
        fail("connection attempt timed out");
    });
    // libpq: start as if PQconnectPoll had asked to write.
    poll_connect(PGRES_POLLING_WRITING);
  }

  void poll_connect(PostgresPollingStatusType st) {
    switch (st) {
      case PGRES_POLLING_OK: return subscribe();
      case PGRES_POLLING_FAILED: return fail(PQerrorMessage(conn));
      case PGRES_POLLING_READING:
      case PGRES_POLLING_WRITING:
        attach();
        if (!sd.is_open())
          return fail("connection has no socket");
        return wait(st == PGRES_POLLING_READING ? wait_type::wait_read
                                                : wait_type::wait_write,
                    [this] { poll_connect(PQconnectPoll(conn)); });
      default: return fail("unexpected connection state");
    }
  }

  void subscribe() {
    deadline.cancel();
    ph = phase::subscribing;
    attach();
    if (PQsetnonblocking(conn, 1) != 0)
      return fail(PQerrorMessage(conn));
    std::string query = "LISTEN \"" + opts.channel + "\"";
    if (!PQsendQuery(conn, query.c_str()))
      return fail(PQerrorMessage(conn));
    busy = true;
    flush();
  }

  void flush() {
    auto r = PQflush(conn);
    if (r < 0)
      return fail(PQerrorMessage(conn));
    if (r == 1)
      return wait(wait_type::wait_write, [this] { flush(); });
    wait(wait_type::wait_read, [this] { readable(); });
  }

  void readable() {
    if (!PQconsumeInput(conn) || PQstatus(conn) == CONNECTION_BAD)
      return fail(PQerrorMessage(conn));
    while (!PQisBusy(conn)) {
      PGresult* r = PQgetResult(conn);
      if (!r) { // the command's results are all in
        busy = false;
        break;
      }
      auto st = PQresultStatus(r);
      bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
      std::string why = ok ? "" : PQresultErrorMessage(r);
      PQclear(r);
      if (!ok)
        return fail(why);
      if (ph == phase::subscribing)
        listening();
      if (ph == phase::stopped)
        return;
    }
    while (PGnotify* n = PQnotifies(conn)) {
      std::string payload = n->extra ? n->extra : "";
      PQfreemem(n);
      counters->notifications.fetch_add(1, std::memory_order_relaxed);
      on_payload(payload);
      // A callback may have stopped the listener.
      if (ph == phase::stopped || !conn)
        return;
    }
    wait(wait_type::wait_read, [this] { readable(); });
    send_next();
  }

  // Sends the oldest queued payload when LISTEN is in place and nothing
  // is in flight; its result is read by `readable`, whose read wait is
  // armed all along.
  void send_next() {
    if (ph != phase::listening || busy || outbox.empty() || !conn)
      return;
    const char* params[] = {opts.channel.c_str(), outbox.front().c_str()};
    if (!PQsendQueryParams(conn, "SELECT pg_notify($1, $2)", 2, nullptr, params,
                           nullptr, nullptr, 0))
      return fail(PQerrorMessage(conn));
    outbox.pop_front();
    busy = true;
    counters->sent.fetch_add(1, std::memory_order_relaxed);
    push();
  }

  // Writes what libpq buffered; waits for the socket while it is full.
  void push() {
    if (flushing)
      return;
    auto r = PQflush(conn);
    if (r < 0)
      return fail(PQerrorMessage(conn));
    if (r == 1) {
      flushing = true;
      wait(wait_type::wait_write, [this] {
        flushing = false;
        push();
      });
    }
  }

  void listening() {
    ph = phase::listening;
    backoff = opts.min_backoff;
    counters->listens.fetch_add(1, std::memory_order_relaxed);
    counters->listening.store(true);
    bool first = !ever_listened;
    ever_listened = true;
    if (on_listening)
      on_listening(first);
  }

  void fail(const std::string& why) {
    if (ph == phase::stopped)
      return;
    counters->failures.fetch_add(1, std::memory_order_relaxed);
    counters->listening.store(false);
    close();
    ph = phase::waiting;
    if (on_failure)
      on_failure(why);
    if (ph == phase::stopped)
      return;
    auto self = owner.lock();
    retry.expires_after(backoff);
    backoff = std::min(backoff * 2, opts.max_backoff);
    retry.async_wait([this, self](const asio::error_code& ec) {
      if (!ec && ph == phase::waiting)
        connect();
    });
  }

  void stop() {
    ph = phase::stopped;
    retry.cancel();
    close();
    counters->listening.store(false);
  }
};

pg_listener::pg_listener(asio::io_context& ioctx)
    : impl_(std::make_unique<impl>(ioctx)) {}

pg_listener::~pg_listener() {
  // Normally stopped already; never let the descriptor close libpq's socket.
  if (impl_->sd.is_open())
    impl_->sd.release();
  if (impl_->conn)
    PQfinish(impl_->conn);
}

std::shared_ptr<pg_listener> pg_listener::start(asio::io_context& ioctx,
                                                pg_listener_options opts,
                                                payload_fn on_payload,
                                                listening_fn on_listening,
                                                failure_fn on_failure) {
  std::shared_ptr<pg_listener> l{new pg_listener(ioctx)};
  auto& p = *l->impl_;
  p.opts = std::move(opts);
  p.backoff = p.opts.min_backoff;
  p.on_payload = std::move(on_payload);
  p.on_listening = std::move(on_listening);
  p.on_failure = std::move(on_failure);
  p.counters = &l->counters_;
  p.owner = l;
  asio::post(ioctx, [l] { l->impl_->connect(); });
  return l;
}

void pg_listener::stop() {
  // A loop that is not running never answers; the destructor cleans up.
  run_on_loop(impl_->io, [self = shared_from_this()] { self->impl_->stop(); });
}

void pg_listener::notify(std::string payload) {
  asio::post(impl_->io, [self = shared_from_this(),
                         payload = std::move(payload)]() mutable {
    auto& p = *self->impl_;
    if (p.ph == impl::phase::stopped)
      return;
    p.outbox.push_back(std::move(payload));
    p.send_next();
  });
}

void pg_listener::drop_connection() {
  asio::post(impl_->io, [self = shared_from_this()] {
    auto& p = *self->impl_;
    if (p.conn && PQsocket(p.conn) >= 0)
      ::shutdown(PQsocket(p.conn), SHUT_RDWR);
  });
}

} // namespace mailassay::net
