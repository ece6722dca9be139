#include "net/io_thread.hpp"

#include <asio/post.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

using mailassay::net::io_thread;
using mailassay::net::run_on_loop;
using namespace std::chrono_literals;

TEST_SUITE("net.io_thread") {
  TEST_CASE("run_on_loop runs on the loop's thread and returns after it") {
    io_thread loop{"test-io"};
    std::thread::id ran_on;
    std::atomic<bool> ran{false};
    CHECK(run_on_loop(loop.context(), [&] {
      ran_on = std::this_thread::get_id();
      ran = true;
    }));
    CHECK(ran);
    CHECK(ran_on != std::this_thread::get_id());
  }

  TEST_CASE("run_on_loop on the loop's own thread runs at once") {
    io_thread loop{"test-io"};
    std::promise<bool> inner;
    asio::post(loop.context(), [&] {
      bool ran = false;
      // Posting and waiting here would wait for itself.
      bool done = run_on_loop(loop.context(), [&] { ran = true; });
      inner.set_value(done && ran);
    });
    auto f = inner.get_future();
    REQUIRE(f.wait_for(30s) == std::future_status::ready);
    CHECK(f.get());
  }

  TEST_CASE("run_on_loop gives up on a loop that does not run") {
    asio::io_context idle;
    std::atomic<bool> ran{false};
    CHECK_FALSE(run_on_loop(
        idle, [&] { ran = true; }, 50ms));
    CHECK_FALSE(ran);
    // The work stays posted: it runs when the loop runs.
    idle.run();
    CHECK(ran);
  }
}
