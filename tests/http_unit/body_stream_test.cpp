// A body stream (http/body_stream.cpp) over a real RESTinio connection on
// loopback, in process: its calls come from other threads, as a storage
// worker's do, while its last reference may go on the home thread.
#include "http/exchange.hpp"
#include "http/exchange_impl.hpp"
#include "http/metrics.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/server_process.hpp"

#include <doctest/doctest.h>
#include <restinio/all.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

using namespace mailassay;

namespace {

using serve_fn = std::function<void(http::body_stream_ptr)>;

// A RESTinio server on one thread that streams the answer to every request:
// `serve` gets the stream at home, on that thread, as a handler does.
struct stream_server {
  using traits = restinio::default_single_thread_traits_t;

  asio::io_context ioctx;
  http::metrics stats;
  serve_fn serve;
  int port = testing::free_port();
  std::unique_ptr<restinio::http_server_t<traits>> srv;
  std::thread loop;

  explicit stream_server(serve_fn f) : serve(std::move(f)) {
    restinio::server_settings_t<traits> settings;
    settings.address("127.0.0.1")
        .port(static_cast<std::uint16_t>(port))
        .handle_request_timeout(std::chrono::seconds(60))
        .request_handler([this](restinio::request_handle_t req) {
          auto ex = http::exchange::create();
          auto& s = ex->state();
          s.home = &ioctx;
          s.req = std::move(req);
          s.started = std::chrono::steady_clock::now();
          s.stats = &stats;
          s.rate_set = true; // no limiter: no RateLimit values to look up
          ex->stream(http::response{200, {}, "text/plain", {}}, serve);
          return restinio::request_accepted();
        });
    srv = std::make_unique<restinio::http_server_t<traits>>(
        restinio::external_io_context(ioctx), std::move(settings));
    std::promise<void> opened;
    srv->open_async([&] { opened.set_value(); },
                    [&](std::exception_ptr e) { opened.set_exception(e); });
    loop = std::thread([this] { ioctx.run(); });
    opened.get_future().get();
  }

  ~stream_server() {
    std::promise<void> closed;
    srv->close_async([&] { closed.set_value(); },
                     [&](std::exception_ptr) { closed.set_value(); });
    closed.get_future().wait();
    ioctx.stop();
    loop.join();
  }

  // Streams cut off after their head, as /metrics counts them.
  bool aborted(int n) const {
    return stats.render().find("\nmailassay_http_streams_aborted_total " +
                               std::to_string(n) + "\n") != std::string::npos;
  }

  // The raw answer to one GET, read until the server closes the connection
  // (`closed`) or 30 s pass without data.
  std::string get(bool& closed) {
    return testing::raw_exchange(
        port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 30000,
        SIZE_MAX, &closed);
  }
};

} // namespace

TEST_SUITE("http.body_stream") {
  TEST_CASE("a finish called on another thread ends the body even when the "
            "stream's last reference goes first, on the home thread") {
    // The export's last page: a storage worker calls finish, which waits in
    // the home loop's queue, and lets go; the loop drops the last reference
    // before it runs that finish (issue #29's CI failure: the last page was
    // cut off, "stream dropped unfinished").
    stream_server srv{[](http::body_stream_ptr out) {
      std::thread worker([out] { out->finish("the last page"); });
      worker.join();
      // `out`, the last reference, goes when this returns: on the loop,
      // before the finish queued there.
    }};
    bool closed = false;
    auto raw = srv.get(closed);
    CHECK(raw.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(raw.find("the last page") != std::string::npos);
    CHECK(raw.ends_with("\r\n0\r\n\r\n"));
    CHECK(closed);
    CHECK(srv.aborted(0));
  }

  TEST_CASE("a stream dropped unfinished closes the connection without "
            "ending the body") {
    stream_server srv{[](http::body_stream_ptr out) {
      // Written, then dropped on another thread without finish or abort.
      out->write("the first page", [out](bool) mutable {
        std::thread([out = std::move(out)]() mutable { out.reset(); }).detach();
      });
    }};
    bool closed = false;
    auto raw = srv.get(closed);
    CHECK(raw.find("the first page") != std::string::npos);
    CHECK_FALSE(raw.ends_with("\r\n0\r\n\r\n"));
    CHECK(closed);
    // Cut off by the stream, not only by the connection's last handle.
    CHECK(srv.aborted(1));
  }
}
