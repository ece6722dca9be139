#include "http/exchange.hpp"

#include "http/codec/error.hpp"
#include "http/errors.hpp"
#include "http/exchange_impl.hpp"
#include "http/response_writer.hpp"
#include "log/log.hpp"

namespace mailassay::http {

namespace {

// An exchange with its state: one allocation with the shared count.
struct exchange_with_state final : exchange {
  exchange::impl s;

  exchange_with_state() : exchange(s) { s.self = this; }
  // Before `s` goes: the base class can no longer reach it.
  ~exchange_with_state() { settle(); }
};

} // namespace

std::shared_ptr<exchange> exchange::create() {
  return std::make_shared<exchange_with_state>();
}

void exchange::settle() {
  // Everyone who could answer let go of the request: never leave a client
  // (and a connection slot) hanging. Nobody else can reach the state now,
  // and it is not listed (the deadline list owns what it lists), so it is
  // answered on this thread, wherever that is.
  if (impl_->done)
    return;
  // Its loop stopped (the server is gone or going): no answer would be
  // sent, and the server's counters and hooks may be freed already.
  if (impl_->home_stopped && impl_->home_stopped->load()) {
    impl_->done = true;
    impl_->cancelled.store(true, std::memory_order_release);
    return;
  }
  answer_here(response{status_of(core::errc::internal),
                       codec::error_body(core::make_error(
                           core::errc::internal, "request dropped unanswered")),
                       "application/json",
                       {}});
}

const request_view& exchange::request() const {
  return impl_->view;
}

const std::string& exchange::id() const {
  return impl_->id;
}

bool exchange::at_home() const {
  return !impl_->home || impl_->home->get_executor().running_in_this_thread();
}

void exchange::resume(std::function<void()> f) {
  if (at_home())
    return f();
  // Nothing runs a stopped loop's queue: the request ends with the process
  // (its client's connection closes), whoever holds it last.
  if (impl_->home_stopped && impl_->home_stopped->load())
    return;
  asio::post(*impl_->home,
             [self = shared_from_this(), f = std::move(f)] { f(); });
}

// The members below each run on the home thread: called elsewhere, they
// post themselves there first (in order, from one thread).

void exchange::record_usage(std::shared_ptr<const core::account::api_key> key,
                            std::string address) {
  if (!at_home())
    return resume([self = shared_from_this(), key = std::move(key),
                   address = std::move(address)]() mutable {
      self->record_usage(std::move(key), std::move(address));
    });
  impl_->usage_key = std::move(key);
  impl_->usage_address = std::move(address);
}

void exchange::allow_origin(std::string origin) {
  if (!at_home())
    return resume(
        [self = shared_from_this(), origin = std::move(origin)]() mutable {
          self->allow_origin(std::move(origin));
        });
  impl_->cors_origin = std::move(origin);
}

void exchange::set_rate_key(std::shared_ptr<const core::account::api_key> key) {
  if (!at_home())
    return resume([self = shared_from_this(), key = std::move(key)]() mutable {
      self->set_rate_key(std::move(key));
    });
  impl_->rate_key = std::move(key);
}

void exchange::add_header(std::string name, std::string value) {
  if (!at_home())
    return resume([self = shared_from_this(), name = std::move(name),
                   value = std::move(value)]() mutable {
      self->add_header(std::move(name), std::move(value));
    });
  impl_->extra_headers.emplace_back(std::move(name), std::move(value));
}

void exchange::set_rate(rate_headers r) {
  if (!at_home())
    return resume([self = shared_from_this(), r] { self->set_rate(r); });
  impl_->rate = r;
  impl_->rate_set = true;
}

bool exchange::answered() const {
  return impl_->cancelled.load(std::memory_order_acquire);
}

std::shared_ptr<const std::atomic<bool>> exchange::cancel_flag() {
  // Shares the exchange's ownership: the flag lives as long as it is held.
  return {shared_from_this(), &impl_->cancelled};
}

std::chrono::steady_clock::time_point exchange::deadline() const {
  return impl_->deadline_at;
}

std::chrono::steady_clock::time_point exchange::arrived() const {
  return impl_->started;
}

void exchange::respond(response r) {
  if (!at_home())
    return resume([self = shared_from_this(), r = std::move(r)]() mutable {
      self->respond(std::move(r));
    });
  answer_here(std::move(r));
}

void exchange::answer_here(response r) {
  if (impl_->done)
    return;
  impl_->done = true;
  impl_->cancelled.store(true, std::memory_order_release);
  write_answer(*impl_, std::move(r),
               impl_->view.is_head() ? body_mode::length_only
                                     : body_mode::full);
}

void exchange::set_timeout_response(response r) {
  if (!at_home())
    return resume([self = shared_from_this(), r = std::move(r)]() mutable {
      self->set_timeout_response(std::move(r));
    });
  impl_->on_timeout = std::move(r);
}

void exchange::time_out() {
  if (impl_->on_timeout)
    return respond(*impl_->on_timeout);
  // Retry-After as a shed's: the client may come back when the server has
  // caught up, rather than at once into the same backlog.
  auto e = core::make_error(core::errc::unavailable,
                            "The request could not be completed in time");
  e.retry_after = 1;
  fail(e);
}

void exchange::client_gone() {
  if (impl_->done)
    return;
  impl_->close_connection = true;
  respond(response{499, {}, "text/plain", {}});
}

void exchange::json(int status, std::string body) {
  respond(response{status, std::move(body), "application/json", {}});
}

void exchange::fail(const core::error& e) {
  response r{status_of(e.code), codec::error_body(e), "application/json", {}};
  if (e.code == core::errc::rate_limited ||
      e.code == core::errc::widget_rate_limited ||
      (e.code == core::errc::unavailable && e.retry_after > 0))
    r.headers.emplace_back("Retry-After", std::to_string(e.retry_after));
  if (e.code == core::errc::internal)
    log::event(log::level::error, "internal_error",
               {{"request_id", impl_->id}, {"error", e.message}});
  respond(std::move(r));
}

} // namespace mailassay::http
