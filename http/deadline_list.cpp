#include "http/deadline_list.hpp"

#include <vector>

namespace mailassay::http {

deadline_list::deadline_list(asio::io_context& ioctx,
                             std::atomic<std::int64_t>& waiting)
    : timer_(std::in_place, ioctx), waiting_(waiting) {}

void deadline_list::add(exchange& ex) {
  auto& x = ex.state();
  if (closed_ || x.done || x.listed)
    return;
  x.prev = tail_;
  x.next = nullptr;
  (tail_ ? tail_->next : head_) = &x;
  tail_ = &x;
  x.listed = ex.shared_from_this();
  waiting_.fetch_add(1, std::memory_order_relaxed);
  if (!armed_)
    arm(x.deadline_at);
}

void deadline_list::remove(exchange::impl& x) {
  // The caller holds the exchange: dropping the list's reference here
  // never destroys it.
  unlink(x);
}

void deadline_list::fail_all(const core::error& e) {
  std::vector<std::shared_ptr<exchange>> waiting;
  while (head_)
    waiting.push_back(unlink(*head_));
  for (auto& ex : waiting)
    ex->fail(e);
}

void deadline_list::close() {
  closed_ = true;
  // Dropped after the walk: an exchange let go answers itself (500) in its
  // destructor, which must not find the list half unlinked.
  std::vector<std::shared_ptr<exchange>> dropped;
  while (head_)
    dropped.push_back(unlink(*head_));
  dropped.clear();
  timer_.reset();
}

std::shared_ptr<exchange> deadline_list::unlink(exchange::impl& x) {
  if (!x.listed)
    return nullptr;
  (x.prev ? x.prev->next : head_) = x.next;
  (x.next ? x.next->prev : tail_) = x.prev;
  x.prev = x.next = nullptr;
  waiting_.fetch_sub(1, std::memory_order_relaxed);
  return std::move(x.listed);
}

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
  armed_ = false;
  if (closed_)
    return;
  std::vector<std::shared_ptr<exchange>> due;
  auto now = std::chrono::steady_clock::now();
  while (head_ && head_->deadline_at <= now)
    due.push_back(unlink(*head_));
  if (head_)
    arm(head_->deadline_at);
  for (auto& ex : due)
    ex->time_out();
}

} // namespace mailassay::http
