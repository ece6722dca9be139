#include "net/io_thread.hpp"

#include <asio/post.hpp>

#include <future>
#include <memory>
#include <pthread.h>

namespace mailassay::net {

bool run_on_loop(asio::io_context& io, std::function<void()> f,
                 std::chrono::milliseconds limit) {
  if (io.get_executor().running_in_this_thread()) {
    f();
    return true;
  }
  auto finished = std::make_shared<std::promise<void>>();
  auto result = finished->get_future();
  asio::post(io, [f = std::move(f), finished] {
    f();
    finished->set_value();
  });
  return result.wait_for(limit) == std::future_status::ready;
}

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
