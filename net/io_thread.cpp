#include "net/io_thread.hpp"

#include <pthread.h>

namespace mailassay::net {

io_thread::io_thread(std::string name) : work_(asio::make_work_guard(ctx_)) {
  thread_ = std::thread{[this, name = std::move(name)] {
    ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
    ctx_.run();
  }};
}

io_thread::~io_thread() {
  stop();
}

void io_thread::stop() {
  if (!thread_.joinable())
    return;
  work_.reset();
  ctx_.stop();
  thread_.join();
}

} // namespace mailassay::net
