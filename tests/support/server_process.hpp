#pragma once

#include <chrono>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace mailassay::testing {

/// Returns a TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

/// Returns a fresh empty directory under the system's temp directory.
std::string temp_dir(const std::string& tag);

/// An environment value given to `server_process` or `run_binary` that
/// leaves the variable unset (e.g. MAILASSAY_LOG_LEVEL, so that a
/// configuration file decides it).
inline constexpr const char* unset_variable = "\x7f(unset)";

/// The server key (webhooks.secret_key) every test run of the binary gets
/// unless a test sets or unsets MAILASSAY_WEBHOOKS_SECRET_KEY: it seals the
/// JWT signing keys, so the servers and admin commands of a test sharing a
/// database (a cluster, a restart, the shared PostgreSQL of
/// test_http_postgresql, across runs) must all have the same one.
inline constexpr const char* test_server_key =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// The real `mailassay` binary (from MAILASSAY_BINARY) running `serve` on a
/// free port with a fresh SQLite database (or MAILASSAY_TEST_HTTP_DB_URL),
/// plus the extra environment given. Stopped with SIGTERM on destruction.
class server_process {
public:
  explicit server_process(std::map<std::string, std::string> env = {},
                          std::vector<std::string> args = {"serve"});
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  /// The port it listens on.
  int port() const { return port_; }
  /// Its process id (-1 once stopped).
  pid_t pid() const { return pid_; }
  /// Its data directory.
  const std::string& dir() const { return dir_; }
  /// Sends SIGTERM and waits; returns the exit status (or -1).
  int stop();
  /// Kills it with SIGKILL (a crash: nothing is flushed) and reaps it.
  void kill_hard();
  /// Whether the process is still running.
  bool running();
  /// What it wrote on stderr so far.
  std::string log() const;

private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

/// Runs the binary with `args` and `env` to completion; returns the exit
/// code and fills `output` with stdout+stderr.
int run_binary(const std::vector<std::string>& args,
               std::map<std::string, std::string> env, std::string& output);

/// `run_binary` that waits at most `limit`: a binary still running then
/// (a start that hangs instead of ending) is killed and -2 returned.
int run_binary_within(std::chrono::milliseconds limit,
                      const std::vector<std::string>& args,
                      std::map<std::string, std::string> env,
                      std::string& output);

/// Adds what every test run of the binary needs unless already set: the
/// risk lists of the source tree, a DNS server that is never the
/// machine's, and no egress audit in `serve`.
void test_environment(std::map<std::string, std::string>& env);

} // namespace mailassay::testing
