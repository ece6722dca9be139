// bare_server: the baseline of bench/http_bench.sh. A RESTinio 0.6 server
// with the strand policy the service uses (single-thread traits: no strand,
// one I/O thread per io_context, see http/server.cpp; 2-3 % faster than
// default_traits_t here) that answers every request 200 with a small
// JSON body, so the ratios in docs/performance.md measure what mailassay
// adds on top of RESTinio itself.
//
//   bare_server [--address 127.0.0.1] [--port 8080] [--body-bytes N]
//
// --body-bytes answers a JSON body of N bytes instead (`{"pad":"xx..."}`):
// the kernel's and RESTinio's share of a response as large as the
// service's, without any of its work.
//
// Prints "bare_server listening on ADDRESS:PORT" once it accepts; stops on
// SIGINT or SIGTERM.

#include <restinio/all.hpp>

#include <csignal>
#include <iostream>
#include <string>

namespace {

int usage() {
  std::cerr << "usage: bare_server [--address 127.0.0.1] [--port 8080] "
               "[--body-bytes N]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
  std::string body = R"({"status":"ok"})";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--address" && i + 1 < argc)
      address = argv[++i];
    else if (arg == "--port" && i + 1 < argc)
      port = static_cast<std::uint16_t>(std::stoul(argv[++i]));
    else if (arg == "--body-bytes" && i + 1 < argc) {
      auto n = std::stoul(argv[++i]);
      body = R"({"pad":")" + std::string(n > 10 ? n - 10 : 0, 'x') + R"("})";
    }
    else
      return usage();
  }

  using traits = restinio::default_single_thread_traits_t;
  using server_type = restinio::http_server_t<traits>;
  asio::io_context ioctx;
  restinio::server_settings_t<traits> settings;
  settings.address(address).port(port).request_handler(
      [&body](restinio::request_handle_t req) {
        return req->create_response()
            .append_header(restinio::http_field::content_type,
                           "application/json")
            .set_body(body)
            .done();
      });
  server_type server{restinio::external_io_context(ioctx), std::move(settings)};

  // SIGTERM as well as SIGINT: restinio::run only reacts to SIGINT.
  asio::signal_set signals{ioctx, SIGINT, SIGTERM};
  signals.async_wait([&](const asio::error_code&, int) {
    server.close_async([&] { ioctx.stop(); },
                       [&](std::exception_ptr) { ioctx.stop(); });
  });
  server.open_async(
      [&] {
        std::cout << "bare_server listening on " << address << ":" << port
                  << std::endl;
      },
      [&](std::exception_ptr e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          std::cerr << "bare_server: " << ex.what() << "\n";
        }
        ioctx.stop();
      });
  ioctx.run(); // one event loop, like http.io_threads = 1
  return 0;
}
