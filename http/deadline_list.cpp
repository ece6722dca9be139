#include "http/deadline_list.hpp"

#include <vector>

namespace mailassay::http {

deadline_list::deadline_list(asio::io_context& ioctx,
                             std::chrono::milliseconds timeout)
    : timer_(std::in_place, ioctx), timeout_(timeout) {}

void deadline_list::add(exchange& ex) {
  auto& x = ex.state();
  std::lock_guard guard{mtx_};
  if (closed_)
    return;
  x.added.store(true);
  if (x.done.load())
    return; // answered meanwhile, on another thread
  // From the arrival time: one clock read fewer, and the order is the same.
  x.deadline_at = x.started + timeout_;
  x.prev = tail_;
  x.next = nullptr;
  (tail_ ? tail_->next : head_) = &x;
  tail_ = &x;
  x.listed = true;
  if (!armed_)
    arm(x.deadline_at);
}

void deadline_list::remove(exchange::impl& x) {
  std::lock_guard guard{mtx_};
  unlink(x);
}

void deadline_list::close() {
  std::lock_guard guard{mtx_};
  closed_ = true;
  while (head_)
    unlink(*head_);
  timer_.reset();
}

void deadline_list::unlink(exchange::impl& x) {
  if (!x.listed)
    return;
  (x.prev ? x.prev->next : head_) = x.next;
  (x.next ? x.next->prev : tail_) = x.prev;
  x.prev = x.next = nullptr;
  x.listed = false;
}

// Called with the lock held; asio timers are not thread-safe, and every use
// of this one is under the lock.
void deadline_list::arm(std::chrono::steady_clock::time_point at) {
  armed_ = true;
  timer_->expires_at(at);
  timer_->async_wait([weak = weak_from_this()](const asio::error_code& ec) {
    if (ec)
      return;
    if (auto self = weak.lock())
      self->on_timer();
  });
}

void deadline_list::on_timer() {
  std::vector<exchange_ptr> due;
  {
    std::lock_guard guard{mtx_};
    armed_ = false;
    if (closed_)
      return;
    auto now = std::chrono::steady_clock::now();
    while (head_ && head_->deadline_at <= now) {
      auto& x = *head_;
      unlink(x);
      // A request whose last owner is letting go answers itself (500) in
      // its destructor.
      if (auto ex = x.self->weak_from_this().lock())
        due.push_back(std::move(ex));
    }
    if (head_)
      arm(head_->deadline_at);
  }
  for (auto& ex : due)
    ex->time_out();
}

} // namespace mailassay::http
