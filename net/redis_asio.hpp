#pragma once

// hiredis' asynchronous context on an asio event loop: the adapter behind
// net::redis_client and net::redis_subscriber.
//
// hiredis does the protocol and asks for readiness through its event hooks
// (addRead/delRead/addWrite/delWrite/cleanup); this adapter turns them into
// async_waits on the context's socket in the loop's reactor, so hiredis
// reads and writes only when the socket is ready, on the loop's thread.
// Nothing blocks and nothing polls.
//
// The socket stays hiredis' (it closes it when the context is freed): the
// adapter only borrows the descriptor and releases it on `detach`. Waits
// armed before a detach are recognised by an epoch and ignored, so a
// completion never reaches a context that is gone.

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include <cstdint>
#include <functional>
#include <memory>

struct redisAsyncContext;

namespace mailassay::net {

/// One hiredis context at a time, attached to one loop. Used only on the
/// loop's thread.
class redis_asio {
public:
  /// Runs when hiredis frees the attached context (connection lost,
  /// refused, or freed by the owner), after the adapter let go of the
  /// socket; the context is still readable (its `err`/`errstr`) and is
  /// gone once this returns.
  using cleanup_fn = std::function<void(const redisAsyncContext* ac)>;

  /// An adapter on `io`, attached to nothing.
  explicit redis_asio(asio::io_context& io);

  /// Releases the socket without closing it (hiredis owns it).
  ~redis_asio();

  redis_asio(const redis_asio&) = delete;
  redis_asio& operator=(const redis_asio&) = delete;

  /// Hooks `ac`'s events to the loop. `keep_alive` is held by every wait in
  /// flight (the owner of this adapter), so a completion never outlives it.
  /// Call before setting hiredis' connect callback (which asks to write).
  void attach(redisAsyncContext* ac, std::weak_ptr<void> keep_alive,
              cleanup_fn on_cleanup);

  /// Stops waiting and releases the socket; the waits in flight are
  /// ignored when they complete.
  void detach();

private:
  using wait_type = asio::posix::stream_descriptor::wait_type;

  static void add_read(void* p);
  static void del_read(void* p);
  static void add_write(void* p);
  static void del_write(void* p);
  static void cleanup(void* p);
  void arm(wait_type what);

  asio::posix::stream_descriptor sd_;
  redisAsyncContext* ac_ = nullptr;
  std::weak_ptr<void> keep_alive_;
  cleanup_fn on_cleanup_;
  bool want_read_ = false, want_write_ = false;
  bool read_armed_ = false, write_armed_ = false;
  std::uint64_t epoch_ = 0; // bumped when the socket is released
};

} // namespace mailassay::net
