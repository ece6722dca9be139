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
  // (and a connection slot) hanging.
  if (!impl_->done.load())
    fail(core::make_error(core::errc::internal, "request dropped unanswered"));
}

const request_view& exchange::request() const {
  return impl_->view;
}

const std::string& exchange::id() const {
  return impl_->id;
}

void exchange::record_usage(std::shared_ptr<const core::account::api_key> key,
                            std::string address) {
  impl_->usage_key = std::move(key);
  impl_->usage_address = std::move(address);
}

void exchange::allow_origin(std::string origin) {
  impl_->cors_origin = std::move(origin);
}

void exchange::set_rate_key(std::shared_ptr<const core::account::api_key> key) {
  impl_->rate_key = std::move(key);
}

void exchange::add_header(std::string name, std::string value) {
  impl_->extra_headers.emplace_back(std::move(name), std::move(value));
}

void exchange::set_rate(rate_headers r) {
  impl_->rate = r;
  impl_->rate_set = true;
}

bool exchange::answered() const {
  return impl_->done.load();
}

void exchange::respond(response r) {
  if (impl_->done.exchange(true))
    return;
  write_answer(*impl_, std::move(r),
               impl_->view.is_head() ? body_mode::length_only
                                     : body_mode::full);
}

void exchange::set_timeout_response(response r) {
  impl_->on_timeout = std::move(r);
}

void exchange::time_out() {
  if (impl_->on_timeout)
    return respond(*impl_->on_timeout);
  fail(core::make_error(core::errc::unavailable,
                        "The request could not be completed in time"));
}

void exchange::json(int status, std::string body) {
  respond(response{status, std::move(body), "application/json", {}});
}

void exchange::fail(const core::error& e) {
  response r{status_of(e.code), codec::error_body(e), "application/json", {}};
  if (e.code == core::errc::rate_limited ||
      e.code == core::errc::widget_rate_limited)
    r.headers.emplace_back("Retry-After", std::to_string(e.retry_after));
  if (e.code == core::errc::internal)
    log::event(log::level::error, "internal_error",
               {{"request_id", impl_->id}, {"error", e.message}});
  respond(std::move(r));
}

} // namespace mailassay::http
