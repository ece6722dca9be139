#include "net/smtp_client.hpp"

#include "core/limits/client_ip.hpp"
#include "net/call_pool.hpp"
#include "net/client_call.hpp"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace mailassay::net {

namespace {

using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using core::smtp::action;
using core::smtp::action_kind;
using core::smtp::connect_failure;

// "ip:port" or "[v6]:port", IP literals only.
std::optional<tcp::endpoint> parse_endpoint(std::string_view text) {
  std::string_view host, port;
  if (text.starts_with('[')) {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':')
      return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned number = 0;
  auto [end, ec] =
      std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() ||
      number == 0 || number > 65535)
    return std::nullopt;
  std::error_code bad;
  auto address = asio::ip::make_address(std::string{host}, bad);
  if (bad)
    return std::nullopt;
  return tcp::endpoint{address, static_cast<std::uint16_t>(number)};
}

connect_failure classify_connect(const std::error_code& ec) {
  if (ec == asio::error::connection_refused)
    return connect_failure::refused;
  if (ec == asio::error::network_unreachable ||
      ec == asio::error::host_unreachable)
    return connect_failure::unreachable;
  if (ec == asio::error::timed_out)
    return connect_failure::timeout;
  return connect_failure::other;
}

// RFC 1928 §6 reply codes.
connect_failure classify_socks(std::uint8_t rep) {
  switch (rep) {
    case 3:
    case 4: return connect_failure::unreachable;
    case 5: return connect_failure::refused;
    case 6: return connect_failure::timeout;
    default: return connect_failure::proxy;
  }
}

} // namespace

struct smtp_client::impl {
  explicit impl(smtp_client_config c)
      : config(std::move(c)), calls(config.io_threads),
        tls(asio::ssl::context::tls_client) {}

  class call_op;

  smtp_client_config config;
  call_pool<call_op> calls;
  asio::ssl::context tls;
  std::optional<tcp::endpoint> proxy;
  std::optional<asio::ip::address> source;

  std::atomic<std::uint64_t> connected{0}, blocked{0}, tls_done{0}, timeouts{0};
};

// One call: the session, on the connection, strand and timer of its base.
class smtp_client::impl::call_op
    : public client_call<smtp_client::impl::call_op, smtp_client::impl,
                         smtp_call_result> {
public:
  call_op(impl& owner, std::uint64_t id, smtp_call call, callback done)
      : client_call(owner, id, std::move(done)),
        session_(std::move(call.session)), host_(std::move(call.dial.host)),
        address_(std::move(call.dial.address)), port_(call.dial.port),
        step_(call.dial.step_timeout), deadline_(call.dial.deadline),
        on_need_more_(std::move(call.on_need_more)) {}

  void cancel() {
    asio::post(strand_, [self = shared_from_this()] {
      if (!self->finished_)
        self->on_timer();
    });
  }

  // Open-ended: the next address, or QUIT, after `need_more`.
  void more(std::optional<std::pair<std::string, std::string>> next) {
    asio::post(strand_, [self = shared_from_this(), next = std::move(next)] {
      if (self->finished_ || !self->waiting_)
        return;
      self->waiting_ = false;
      self->act(next ? self->session_.give(next->first, next->second)
                     : self->session_.finish());
    });
  }

private:
  friend client_call;

  void begin() {
    started_ = steady::now();
    auto decision = owner_.config.policy.check(address_);
    if (!decision.allowed) {
      ++owner_.blocked;
      return fail(connect_failure::blocked,
                  "address policy: " +
                      std::string{core::smtp::to_string(decision.kind)});
    }
    std::error_code bad;
    auto address = asio::ip::make_address(address_, bad);
    if (bad)
      return fail(connect_failure::other, "bad address: " + address_);
    target_ = tcp::endpoint{address, port_};
    arm(step_);
    auto to = owner_.proxy ? *owner_.proxy : target_;
    if (owner_.source) {
      if (owner_.source->is_v4() != to.address().is_v4())
        return fail(connect_failure::other,
                    "smtp.source_address " + owner_.source->to_string() +
                        " cannot reach " + to.address().to_string() +
                        " (another address family)");
      std::error_code ec;
      conn_.tcp().open(to.protocol(), ec);
      if (!ec)
        conn_.tcp().bind(tcp::endpoint{*owner_.source, 0}, ec);
      if (ec)
        return fail(connect_failure::other, "cannot bind smtp.source_address " +
                                                owner_.source->to_string() +
                                                ": " + ec.message());
    }
    conn_.tcp().async_connect(to,
                              [self = shared_from_this()](std::error_code ec) {
                                self->on_connect(ec);
                              });
  }

  void on_connect(std::error_code ec) {
    if (finished_)
      return;
    if (ec) {
      auto why = classify_connect(ec);
      if (owner_.proxy)
        why = connect_failure::proxy;
      return fail(why, ec.message());
    }
    ++owner_.connected;
    if (owner_.proxy)
      return socks_greet();
    connected();
  }

  // Writes `out_` to the proxy, then goes on with `next`.
  void socks_send(void (call_op::*next)()) {
    conn_.write(asio::buffer(out_), [self = shared_from_this(),
                                     next](std::error_code ec, std::size_t) {
      if (self->finished_)
        return;
      if (ec)
        return self->fail(connect_failure::proxy, ec.message());
      ((*self).*next)();
    });
  }

  // RFC 1928 §3: version 5, one method, "no authentication required".
  void socks_greet() {
    out_.assign("\x05\x01\x00", 3);
    socks_send(&call_op::socks_method);
  }

  void socks_method() {
    asio::async_read(
        conn_.tcp(), asio::buffer(buffer_, 2),
        [self = shared_from_this()](std::error_code ec, std::size_t) {
          if (self->finished_)
            return;
          if (ec || self->buffer_[0] != 5 || self->buffer_[1] != 0)
            return self->fail(connect_failure::proxy,
                              ec ? ec.message() : "no acceptable method");
          self->socks_connect();
        });
  }

  // RFC 1928 §4: CONNECT to the target's IP address and port.
  void socks_connect() {
    out_.assign("\x05\x01\x00", 3);
    auto ip = target_.address();
    if (ip.is_v4()) {
      out_.push_back('\x01');
      auto b = ip.to_v4().to_bytes();
      out_.append(reinterpret_cast<const char*>(b.data()), b.size());
    } else {
      out_.push_back('\x04');
      auto b = ip.to_v6().to_bytes();
      out_.append(reinterpret_cast<const char*>(b.data()), b.size());
    }
    out_.push_back(static_cast<char>(port_ >> 8));
    out_.push_back(static_cast<char>(port_ & 0xff));
    socks_send(&call_op::socks_reply);
  }

  // RFC 1928 §6: VER REP RSV ATYP BND.ADDR BND.PORT.
  void socks_reply() {
    asio::async_read(
        conn_.tcp(), asio::buffer(buffer_, 5),
        [self = shared_from_this()](std::error_code ec, std::size_t) {
          if (self->finished_)
            return;
          auto& b = self->buffer_;
          if (ec)
            return self->fail(connect_failure::proxy, ec.message());
          if (b[0] != 5)
            return self->fail(connect_failure::proxy, "not a SOCKS5 reply");
          auto rep = static_cast<std::uint8_t>(b[1]);
          if (rep != 0)
            return self->fail(classify_socks(rep),
                              "SOCKS5 reply " + std::to_string(rep));
          // The fifth octet is the first of BND.ADDR (or its length).
          std::size_t rest = 0;
          switch (b[3]) {
            case 1: rest = 4 - 1 + 2; break;
            case 4: rest = 16 - 1 + 2; break;
            case 3: rest = static_cast<std::uint8_t>(b[4]) + 2; break;
            default:
              return self->fail(connect_failure::proxy, "bad SOCKS5 address");
          }
          asio::async_read(self->conn_.tcp(), asio::buffer(self->buffer_, rest),
                           [self](std::error_code ec, std::size_t) {
                             if (self->finished_)
                               return;
                             if (ec)
                               return self->fail(connect_failure::proxy,
                                                 ec.message());
                             self->connected();
                           });
        });
  }

  void connected() {
    connected_ = true;
    arm(step_); // the greeting gets a full step
    act(session_.on_connected());
  }

  void act(action a) {
    switch (a.kind) {
      case action_kind::wait: return read();
      case action_kind::send: return write(std::move(a.line));
      case action_kind::start_tls: return handshake();
      case action_kind::close: return succeed();
      case action_kind::need_more: return need_more();
    }
  }

  // Open-ended and ready for an address: ask the owner, and keep reading
  // so that a server closing meanwhile ends the session. The step timer
  // bounds the wait for an answer.
  void need_more() {
    if (!on_need_more_)
      return act(session_.finish());
    waiting_ = true;
    arm(step_);
    if (!reading_)
      read();
    on_need_more_(session_.result());
  }

  void read() {
    reading_ = true;
    auto handler = [self = shared_from_this()](std::error_code ec,
                                               std::size_t n) {
      self->reading_ = false;
      if (self->finished_)
        return;
      // Anything from the server while we wait ends the wait.
      self->waiting_ = false;
      if (ec)
        return self->act(self->session_.on_connection_closed());
      self->act(self->session_.on_data({self->buffer_.data(), n}));
    };
    conn_.read_some(asio::buffer(buffer_), std::move(handler));
  }

  void write(std::string line) {
    out_ = std::move(line);
    // The addresses are known once QUIT is sent: wait briefly for 221.
    arm(session_.state() == core::smtp::session_state::quit
            ? std::min(step_, owner_.config.quit_timeout)
            : step_);
    auto handler = [self = shared_from_this()](std::error_code ec,
                                               std::size_t) {
      if (self->finished_)
        return;
      if (ec)
        return self->act(self->session_.on_connection_closed());
      // A read may still be pending from a wait for work: it gets the
      // reply.
      if (!self->reading_)
        self->read();
    };
    conn_.write(asio::buffer(out_), std::move(handler));
  }

  void handshake() {
    arm(step_);
    conn_.start_tls(owner_.tls, host_, owner_.config.verify_tls,
                    [self = shared_from_this()](std::error_code ec) {
                      if (self->finished_)
                        return;
                      if (ec)
                        return self->act(self->session_.on_tls_failed());
                      ++self->owner_.tls_done;
                      self->act(self->session_.on_tls_established());
                    });
  }

  void arm(std::chrono::milliseconds d) {
    auto at = std::min(steady::now() + d, deadline_);
    timer_.expires_at(at);
    timer_.async_wait(
        [self = shared_from_this(), gen = ++timer_gen_](std::error_code ec) {
          if (ec || gen != self->timer_gen_ || self->finished_)
            return;
          self->on_timer();
        });
  }

  void on_timer() {
    ++owner_.timeouts;
    if (!connected_)
      return fail(connect_failure::timeout, "no connection in time");
    // Any action after a time-out ends the call: the socket may still have
    // an operation pending, so nothing else may be started on it.
    session_.on_timeout();
    succeed();
  }

  void fail(connect_failure why, std::string detail) {
    report_.transport = why;
    report_.detail = std::move(detail);
    report_.result = session_.result();
    finish();
  }

  void succeed() {
    report_.transport = connect_failure::none;
    report_.result = session_.result();
    finish();
  }

  void finish() {
    if (finished_)
      return;
    smtp_call_result out;
    out.report = std::move(report_);
    end(std::move(out));
  }

  core::smtp::session session_;
  std::string host_;
  std::string address_;
  std::uint16_t port_;
  tcp::endpoint target_;
  std::chrono::milliseconds step_;
  steady::time_point deadline_;
  std::function<void(const core::smtp::session_result&)> on_need_more_;
  std::array<char, 4096> buffer_{};
  std::string out_;
  std::uint64_t timer_gen_ = 0;
  bool connected_ = false;
  /// A read is pending.
  bool reading_ = false;
  /// Open-ended: waiting for `give` or `finish`.
  bool waiting_ = false;
  core::smtp::session_report report_;
};

core::expected<std::unique_ptr<smtp_client>>
smtp_client::create(smtp_client_config config) {
  auto self = std::make_shared<impl>(std::move(config));
  if (!self->config.socks5_proxy.empty()) {
    self->proxy = parse_endpoint(self->config.socks5_proxy);
    if (!self->proxy)
      return core::make_error(core::errc::validation_failed,
                              "smtp.socks5_proxy: expected ip:port or "
                              "[v6]:port, got \"" +
                                  self->config.socks5_proxy + "\"");
  }
  if (!self->config.source_address.empty()) {
    std::error_code bad;
    self->source = asio::ip::make_address(self->config.source_address, bad);
    if (bad)
      return core::make_error(core::errc::validation_failed,
                              "smtp.source_address: expected an IP address, "
                              "got \"" +
                                  self->config.source_address + "\"");
  }
  std::error_code ec;
  self->tls.set_options(asio::ssl::context::default_workarounds |
                            asio::ssl::context::no_sslv2 |
                            asio::ssl::context::no_sslv3,
                        ec);
  if (!ec && self->config.verify_tls)
    self->tls.set_default_verify_paths(ec);
  if (ec)
    return core::make_error(core::errc::internal,
                            "smtp TLS set-up: " + ec.message());
  self->tls.set_verify_mode(asio::ssl::verify_none);
  self->calls.run(self->config.io_threads);
  return std::unique_ptr<smtp_client>(new smtp_client(std::move(self)));
}

smtp_client::smtp_client(std::shared_ptr<impl> self) : impl_(std::move(self)) {}

smtp_client::~smtp_client() {
  shutdown();
}

smtp_client::call_id smtp_client::run(smtp_call call, callback done) {
  auto& s = *impl_;
  call_id id = 0;
  auto op = s.calls.open([&](std::uint64_t fresh) {
    id = fresh;
    return std::make_shared<impl::call_op>(s, id, std::move(call),
                                           std::move(done));
  });
  if (op) {
    op->start();
    return id;
  }
  smtp_call_result out;
  out.report.transport = connect_failure::other;
  out.report.detail = "smtp client shut down";
  out.report.result = call.session.result();
  if (done)
    done(std::move(out));
  return 0;
}

void smtp_client::give(call_id id, std::string address, std::string probe) {
  if (auto op = impl_->calls.find(id))
    op->more(std::make_pair(std::move(address), std::move(probe)));
}

void smtp_client::finish(call_id id) {
  if (auto op = impl_->calls.find(id))
    op->more(std::nullopt);
}

smtp_client_counters smtp_client::counters() const {
  auto& s = *impl_;
  auto c = s.calls.counters<smtp_client_counters>();
  c.connected = s.connected.load();
  c.blocked = s.blocked.load();
  c.tls = s.tls_done.load();
  c.timeouts = s.timeouts.load();
  return c;
}

void smtp_client::shutdown() {
  impl_->calls.shutdown();
}

} // namespace mailassay::net
