#include "net/redis_subscriber.hpp"

#include "net/io_thread.hpp"
#include "net/redis_asio.hpp"

#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace mailassay::net {

struct redis_subscriber::impl {
  explicit impl(asio::io_context& io)
      : io(io), adapter(io), retry(io), resolver(io) {}

  asio::io_context& io;
  redis_endpoint endpoint;
  std::string channel;
  message_fn on_message;
  std::atomic<bool>* up = nullptr;
  std::weak_ptr<redis_subscriber> owner;

  redisAsyncContext* ac = nullptr;
  redis_asio adapter; // the context's socket in the loop's reactor
  asio::steady_timer retry;
  asio::ip::tcp::resolver resolver;
  std::chrono::milliseconds backoff{100};
  bool stopped = false;

  // hiredis freed the context: forget it and try again later.
  void gone() {
    ac = nullptr;
    up->store(false);
    later();
  }

  void connect() {
    if (stopped)
      return;
    asio::error_code ec;
    auto ip = asio::ip::make_address(endpoint.host, ec);
    if (!ec)
      return open(ip.to_string());
    auto self = owner.lock();
    resolver.async_resolve(
        endpoint.host, std::to_string(endpoint.port),
        [this, self](const asio::error_code& ec,
                     asio::ip::tcp::resolver::results_type results) {
          if (stopped)
            return;
          if (ec || results.empty())
            return later();
          open(results.begin()->endpoint().address().to_string());
        });
  }

  void open(const std::string& ip) {
    ac = redisAsyncConnect(ip.c_str(), endpoint.port);
    if (!ac || ac->err) {
      if (ac)
        redisAsyncFree(ac);
      ac = nullptr;
      return later();
    }
    ac->data = this;
    adapter.attach(ac, owner, [this](const redisAsyncContext*) { gone(); });
    redisAsyncSetConnectCallback(ac, on_connect);
  }

  static void on_connect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<impl*>(c->data);
    if (status != REDIS_OK || !self->ac)
      return; // hiredis frees the context next (cleanup retries)
    self->subscribe();
  }

  void subscribe() {
    const auto& e = endpoint;
    if (!e.password.empty()) {
      if (e.user.empty())
        redisAsyncCommand(ac, nullptr, nullptr, "AUTH %b", e.password.data(),
                          e.password.size());
      else
        redisAsyncCommand(ac, nullptr, nullptr, "AUTH %b %b", e.user.data(),
                          e.user.size(), e.password.data(), e.password.size());
    }
    // hiredis keeps this callback for every message of the channel; its
    // first call confirms the subscription.
    redisAsyncCommand(ac, on_reply, this, "SUBSCRIBE %b", channel.data(),
                      channel.size());
  }

  static void on_reply(redisAsyncContext*, void* r, void* priv) {
    auto* self = static_cast<impl*>(priv);
    auto* reply = static_cast<const redisReply*>(r);
    if (!reply || self->stopped || reply->type != REDIS_REPLY_ARRAY ||
        reply->elements != 3 || reply->element[0]->type != REDIS_REPLY_STRING)
      return;
    std::string_view kind{reply->element[0]->str, reply->element[0]->len};
    if (kind == "subscribe") {
      self->backoff = std::chrono::milliseconds(100);
      self->up->store(true);
    } else if (kind == "message" &&
               reply->element[2]->type == REDIS_REPLY_STRING) {
      self->on_message(
          std::string_view{reply->element[2]->str, reply->element[2]->len});
    }
  }

  void later() {
    if (stopped)
      return;
    auto self = owner.lock();
    retry.expires_after(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    retry.async_wait([this, self](const asio::error_code& ec) {
      if (!ec && !ac)
        connect();
    });
  }

  void stop() {
    stopped = true;
    up->store(false);
    retry.cancel();
    resolver.cancel();
    if (ac)
      redisAsyncFree(ac);
    adapter.detach();
  }
};

redis_subscriber::redis_subscriber(asio::io_context& ioctx)
    : impl_(std::make_unique<impl>(ioctx)) {}

redis_subscriber::~redis_subscriber() = default;

std::shared_ptr<redis_subscriber>
redis_subscriber::start(asio::io_context& ioctx, redis_endpoint endpoint,
                        std::string channel, message_fn on_message) {
  std::shared_ptr<redis_subscriber> s{new redis_subscriber(ioctx)};
  auto& p = *s->impl_;
  p.endpoint = std::move(endpoint);
  p.channel = std::move(channel);
  p.on_message = std::move(on_message);
  p.up = &s->up_;
  p.owner = s;
  asio::post(ioctx, [s] { s->impl_->connect(); });
  return s;
}

void redis_subscriber::stop() {
  run_on_loop(impl_->io, [self = shared_from_this()] { self->impl_->stop(); });
}

} // namespace mailassay::net
