// hop_server: bench/bare_server plus exactly one CAF hop, the service's
// hot-path shape without its work. The RESTinio handler (default traits, one
// I/O thread) hands the request handle to a round-robin actor_pool of
// event-based actors on the CAF scheduler configured like `mailassay serve`
// (2 threads, `sharing` policy), which writes the same 200 + small JSON
// body. bench/http_bench.sh runs it beside bare_server so the cost of the
// hop itself is measured in the same run as everything else.
//
//   hop_server [--address 127.0.0.1] [--port 8080] [--workers 2]
//              [--scheduler-threads 2] [--policy sharing|stealing]
//              [--caf key=value]...
//
// `--caf` sets any CAF option, e.g. `--caf
// work-stealing.moderate-poll-attempts=0` (a number, or a duration ending
// in ns, us or ms), to compare scheduler settings against the same
// baseline.

#include <caf/all.hpp>
#include <restinio/all.hpp>

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

// A local-only message: the request travels by handle inside the process.
struct bench_request {
  restinio::request_handle_t req;
};

} // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(bench_request)

namespace {

int usage() {
  std::cerr << "usage: hop_server [--address 127.0.0.1] [--port 8080] "
               "[--workers 2] [--scheduler-threads 2] "
               "[--policy sharing|stealing] [--caf key=value]...\n";
  return 2;
}

// Sets one `key=value` CAF option: a duration when the value ends in ns,
// us or ms, else a number. Returns false when it is malformed.
bool set_caf_option(caf::actor_system_config& cfg, const std::string& kv) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
    return false;
  auto key = kv.substr(0, eq);
  auto value = kv.substr(eq + 1);
  if (value.front() < '0' || value.front() > '9')
    return false;
  std::size_t used = 0;
  auto n = std::stoull(value, &used);
  auto unit = value.substr(used);
  if (unit.empty())
    cfg.set(key, static_cast<std::size_t>(n));
  else if (unit == "ns")
    cfg.set(key, caf::timespan{std::chrono::nanoseconds(n)});
  else if (unit == "us")
    cfg.set(key, caf::timespan{std::chrono::microseconds(n)});
  else if (unit == "ms")
    cfg.set(key, caf::timespan{std::chrono::milliseconds(n)});
  else
    return false;
  return true;
}

caf::behavior responder(caf::event_based_actor*) {
  return {
      [](bench_request& r) {
        r.req->create_response()
            .append_header(restinio::http_field::content_type,
                           "application/json")
            .set_body(R"({"status":"ok"})")
            .done();
      },
  };
}

} // namespace

int main(int argc, char** argv) {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
  std::size_t workers = 2;
  int scheduler_threads = 2;
  std::string policy = "sharing";
  std::vector<std::string> caf_options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage();
    if (arg == "--address")
      address = argv[++i];
    else if (arg == "--port")
      port = static_cast<std::uint16_t>(std::stoul(argv[++i]));
    else if (arg == "--workers")
      workers = std::stoul(argv[++i]);
    else if (arg == "--scheduler-threads")
      scheduler_threads = std::stoi(argv[++i]);
    else if (arg == "--policy")
      policy = argv[++i];
    else if (arg == "--caf")
      caf_options.emplace_back(argv[++i]);
    else
      return usage();
  }
  if (policy != "sharing" && policy != "stealing")
    return usage();

  using traits = restinio::default_traits_t;
  using server_type = restinio::http_server_t<traits>;
  // The I/O context and server outlive the actor system (destroyed first).
  asio::io_context ioctx;
  std::unique_ptr<server_type> server;
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", scheduler_threads);
  cfg.set("scheduler.policy",
          policy == "sharing" ? caf::atom("sharing") : caf::atom("stealing"));
  for (auto& kv : caf_options)
    if (!set_caf_option(cfg, kv))
      return usage();
  caf::actor_system sys{cfg};
  auto pool = caf::actor_pool::make(
      sys.dummy_execution_unit(), workers,
      [&sys] { return sys.spawn(responder); }, caf::actor_pool::round_robin());

  restinio::server_settings_t<traits> settings;
  settings.address(address).port(port).request_handler(
      [pool](restinio::request_handle_t req) {
        caf::anon_send(pool, bench_request{std::move(req)});
        return restinio::request_accepted();
      });
  server = std::make_unique<server_type>(restinio::external_io_context(ioctx),
                                         std::move(settings));

  asio::signal_set signals{ioctx, SIGINT, SIGTERM};
  signals.async_wait([&](const asio::error_code&, int) {
    server->close_async([&] { ioctx.stop(); },
                        [&](std::exception_ptr) { ioctx.stop(); });
  });
  server->open_async(
      [&] {
        std::cout << "hop_server listening on " << address << ":" << port
                  << std::endl;
      },
      [&](std::exception_ptr e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          std::cerr << "hop_server: " << ex.what() << "\n";
        }
        ioctx.stop();
      });
  ioctx.run();
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  return 0;
}
