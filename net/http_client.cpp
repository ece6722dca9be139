#include "net/http_client.hpp"

#include "net/call_pool.hpp"
#include "net/client_call.hpp"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace mailassay::net {

namespace {

using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using core::webhooks::head_state;

} // namespace

std::string_view to_string(http_failure f) {
  switch (f) {
    case http_failure::none: return "none";
    case http_failure::bad_request: return "bad_request";
    case http_failure::resolve: return "resolve";
    case http_failure::blocked: return "blocked";
    case http_failure::connect: return "connect";
    case http_failure::tls: return "tls";
    case http_failure::timeout: return "timeout";
    case http_failure::protocol: return "protocol";
    case http_failure::shutdown: return "shutdown";
  }
  return "none";
}

struct http_client::impl {
  explicit impl(http_client_config c)
      : config(std::move(c)), calls(config.io_threads),
        tls(asio::ssl::context::tls_client) {}

  class call_op;

  http_client_config config;
  call_pool<call_op> calls;
  asio::ssl::context tls;

  std::atomic<std::uint64_t> blocked{0}, answered{0};
};

// One call: the request, on the connection, strand and timer of its base.
class http_client::impl::call_op
    : public client_call<http_client::impl::call_op, http_client::impl,
                         http_result> {
public:
  call_op(impl& owner, std::uint64_t id, http_post request, callback done)
      : client_call(owner, id, std::move(done)), request_(std::move(request)) {}

  void cancel() {
    asio::post(strand_, [self = shared_from_this()] {
      self->fail(http_failure::shutdown, "client shut down");
    });
  }

private:
  friend client_call;

  void begin() {
    started_ = steady::now();
    auto head = core::webhooks::request_head(
        "POST", request_.url, request_.fields, request_.body.size());
    if (!head)
      return fail(http_failure::bad_request, head.error_value().message);
    out_ = std::move(*head);
    timer_.expires_after(request_.timeout);
    timer_.async_wait([self = shared_from_this()](std::error_code ec) {
      if (!ec)
        self->fail(http_failure::timeout, "no answer in time");
    });
    if (request_.url.host_is_ip)
      return on_resolved({{request_.url.host}, {}});
    if (!owner_.config.resolve)
      return fail(http_failure::resolve, "no resolver for host names");
    // The answer may come on any thread: back onto the strand.
    owner_.config.resolve(
        request_.url.host, [self = shared_from_this()](http_resolution r) {
          asio::post(self->strand_, [self, r = std::move(r)]() mutable {
            self->on_resolved(std::move(r));
          });
        });
  }

  void on_resolved(http_resolution r) {
    if (finished_)
      return;
    if (!r.error.empty() || r.addresses.empty())
      return fail(http_failure::resolve,
                  r.error.empty() ? "no address" : r.error);
    // Every address is checked before any is used: a name that points at
    // one refused address is refused as a whole.
    for (const auto& a : r.addresses) {
      auto d = owner_.config.policy.check(a);
      if (!d.allowed) {
        ++owner_.blocked;
        return fail(http_failure::blocked,
                    "address policy: " + std::string{to_string(d.kind)} +
                        " address " + a);
      }
      std::error_code bad;
      auto ip = asio::ip::make_address(a, bad);
      if (bad)
        return fail(http_failure::resolve, "bad address " + a);
      endpoints_.emplace_back(ip, request_.url.port);
    }
    connect_next();
  }

  void connect_next() {
    if (next_endpoint_ >= endpoints_.size())
      return fail(http_failure::connect, last_error_.empty()
                                             ? "no address to connect to"
                                             : last_error_);
    auto to = endpoints_[next_endpoint_++];
    std::error_code ignored;
    conn_.tcp().close(ignored);
    conn_.tcp().async_connect(
        to, [self = shared_from_this(), to](std::error_code ec) {
          if (self->finished_)
            return;
          if (ec) {
            self->last_error_ = to.address().to_string() + ": " + ec.message();
            return self->connect_next();
          }
          self->address_ = to.address().to_string();
          self->request_.url.tls ? self->handshake() : self->write();
        });
  }

  void handshake() {
    conn_.start_tls(owner_.tls, request_.url.host, true,
                    [self = shared_from_this()](std::error_code ec) {
                      if (self->finished_)
                        return;
                      if (ec)
                        return self->fail(http_failure::tls,
                                          "TLS: " + ec.message());
                      self->write();
                    });
  }

  void write() {
    std::array<asio::const_buffer, 2> bufs{asio::buffer(out_),
                                           asio::buffer(request_.body)};
    auto handler = [self = shared_from_this()](std::error_code ec,
                                               std::size_t) {
      if (self->finished_)
        return;
      if (ec)
        return self->fail(http_failure::connect,
                          "sending the request: " + ec.message());
      self->read();
    };
    conn_.write(bufs, std::move(handler));
  }

  void read() {
    auto handler = [self = shared_from_this()](std::error_code ec,
                                               std::size_t n) {
      if (self->finished_)
        return;
      self->received_.append(self->buffer_.data(), n);
      auto head = core::webhooks::read_response_head(
          self->received_, self->owner_.config.max_head_bytes);
      switch (head.state) {
        case head_state::complete:
          ++self->owner_.answered;
          return self->succeed(head.status_code);
        case head_state::malformed:
          return self->fail(http_failure::protocol, "not an HTTP/1.x answer");
        case head_state::too_large:
          return self->fail(
              http_failure::protocol,
              "answer head larger than " +
                  std::to_string(self->owner_.config.max_head_bytes) +
                  " bytes");
        case head_state::incomplete: break;
      }
      if (ec)
        return self->fail(http_failure::protocol,
                          "connection closed before the status line (" +
                              ec.message() + ")");
      self->read();
    };
    conn_.read_some(asio::buffer(buffer_), std::move(handler));
  }

  void succeed(int status) {
    result_.failure = http_failure::none;
    result_.status_code = status;
    finish();
  }

  void fail(http_failure why, std::string detail) {
    if (finished_)
      return;
    result_.failure = why;
    result_.detail = std::move(detail);
    finish();
  }

  void finish() {
    if (finished_)
      return;
    result_.address = address_;
    end(std::move(result_));
  }

  http_post request_;
  std::string out_;
  std::vector<tcp::endpoint> endpoints_;
  std::size_t next_endpoint_ = 0;
  std::string last_error_;
  std::string address_;
  std::array<char, 4096> buffer_{};
  std::string received_;
  http_result result_;
};

core::expected<std::unique_ptr<http_client>>
http_client::create(http_client_config config) {
  auto self = std::make_shared<impl>(std::move(config));
  std::error_code ec;
  // TLS 1.2 at least (RFC 8996 deprecates 1.0 and 1.1).
  self->tls.set_options(
      asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
          asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
          asio::ssl::context::no_tlsv1_1,
      ec);
  if (!ec)
    self->tls.set_default_verify_paths(ec);
  if (ec)
    return core::make_error(core::errc::internal,
                            "webhook TLS set-up: " + ec.message());
  if (!self->config.ca_file.empty()) {
    self->tls.load_verify_file(self->config.ca_file, ec);
    if (ec)
      return core::make_error(core::errc::validation_failed,
                              "cannot load the CA file " +
                                  self->config.ca_file + ": " + ec.message());
  }
  self->tls.set_verify_mode(asio::ssl::verify_peer);
  self->calls.run(self->config.io_threads);
  return std::unique_ptr<http_client>(new http_client(std::move(self)));
}

http_client::http_client(std::shared_ptr<impl> self) : impl_(std::move(self)) {}

http_client::~http_client() {
  shutdown();
}

void http_client::post(http_post request, callback done) {
  auto& s = *impl_;
  auto op = s.calls.open([&](std::uint64_t id) {
    return std::make_shared<impl::call_op>(s, id, std::move(request),
                                           std::move(done));
  });
  if (op) {
    op->start();
    return;
  }
  http_result out;
  out.failure = http_failure::shutdown;
  out.detail = "client shut down";
  if (done)
    done(std::move(out));
}

http_client_counters http_client::counters() const {
  auto& s = *impl_;
  auto c = s.calls.counters<http_client_counters>();
  c.blocked = s.blocked.load();
  c.answered = s.answered.load();
  return c;
}

void http_client::shutdown() {
  impl_->calls.shutdown();
}

} // namespace mailassay::net
