#include "net/redis_asio.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace mailassay::net {

redis_asio::redis_asio(asio::io_context& io) : sd_(io) {}

redis_asio::~redis_asio() {
  if (sd_.is_open())
    sd_.release();
}

void redis_asio::attach(redisAsyncContext* ac, std::weak_ptr<void> keep_alive,
                        cleanup_fn on_cleanup) {
  ac_ = ac;
  keep_alive_ = std::move(keep_alive);
  on_cleanup_ = std::move(on_cleanup);
  ac->ev.data = this;
  ac->ev.addRead = add_read;
  ac->ev.delRead = del_read;
  ac->ev.addWrite = add_write;
  ac->ev.delWrite = del_write;
  ac->ev.cleanup = cleanup;
  sd_.assign(ac->c.fd);
}

void redis_asio::add_read(void* p) {
  auto* self = static_cast<redis_asio*>(p);
  self->want_read_ = true;
  self->arm(wait_type::wait_read);
}

void redis_asio::del_read(void* p) {
  static_cast<redis_asio*>(p)->want_read_ = false;
}

void redis_asio::add_write(void* p) {
  auto* self = static_cast<redis_asio*>(p);
  self->want_write_ = true;
  self->arm(wait_type::wait_write);
}

void redis_asio::del_write(void* p) {
  static_cast<redis_asio*>(p)->want_write_ = false;
}

// The context is being freed (hiredis closes the socket right after). The
// owner may start a new connection from its callback, so the adapter is
// detached first.
void redis_asio::cleanup(void* p) {
  auto* self = static_cast<redis_asio*>(p);
  auto* ac = self->ac_;
  self->ac_ = nullptr;
  self->detach();
  // A copy: the owner may attach a new context (and callback) from it.
  if (auto fn = self->on_cleanup_)
    fn(ac);
}

void redis_asio::arm(wait_type what) {
  bool& armed = what == wait_type::wait_read ? read_armed_ : write_armed_;
  if (armed || !sd_.is_open())
    return;
  armed = true;
  auto hold = keep_alive_.lock();
  auto at = epoch_;
  sd_.async_wait(what, [this, hold, what, at](const asio::error_code& ec) {
    if (at != epoch_)
      return;
    bool reading = what == wait_type::wait_read;
    (reading ? read_armed_ : write_armed_) = false;
    if (ec || !ac_)
      return;
    if (reading ? want_read_ : want_write_) {
      if (reading)
        redisAsyncHandleRead(ac_);
      else
        redisAsyncHandleWrite(ac_);
    }
    // hiredis asks again (add_read) when it wants more; re-arm if it still
    // wants and the context survived.
    if (ac_ && at == epoch_ && (reading ? want_read_ : want_write_))
      arm(what);
  });
}

void redis_asio::detach() {
  ++epoch_;
  read_armed_ = write_armed_ = false;
  want_read_ = want_write_ = false;
  if (sd_.is_open())
    sd_.release();
}

} // namespace mailassay::net
