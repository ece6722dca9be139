#include "tests/support/server_process.hpp"

#include "tests/support/http_client.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <random>
#include <signal.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mailassay::testing {

namespace {

std::string binary() {
  auto* b = std::getenv("MAILASSAY_BINARY");
  if (!b)
    throw std::runtime_error("MAILASSAY_BINARY is not set (run via ctest)");
  return b;
}

pid_t spawn(const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env,
            const std::string& output_file) {
  auto pid = ::fork();
  if (pid != 0)
    return pid;
  for (auto& [k, v] : env)
    if (v == unset_variable)
      ::unsetenv(k.c_str());
    else
      ::setenv(k.c_str(), v.c_str(), 1);
  auto fd = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  auto bin = binary();
  std::vector<char*> argv{bin.data()};
  std::vector<std::string> copy = args;
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(bin.c_str(), argv.data());
  ::_exit(127);
}

} // namespace

void test_environment(std::map<std::string, std::string>& env) {
  if (auto* root = std::getenv("MAILASSAY_SOURCE_DIR"))
    env.emplace("MAILASSAY_RISK_DATA_DIR", std::string{root} + "/data/risk");
  // No test may reach the machine's resolver: without a test DNS server, a
  // closed loopback port answers every query with a failure.
  env.emplace("MAILASSAY_DNS_SERVERS", "127.0.0.1:1");
  // No egress audit unless a test asks for one: its DNS queries and
  // connections would mix with the ones tests count.
  env.emplace("MAILASSAY_EGRESS_AT_START", "false");
  env.emplace("MAILASSAY_EGRESS_INTERVAL_SECONDS", "0");
  env.emplace("MAILASSAY_WEBHOOKS_SECRET_KEY", test_server_key);
  // Every test signs up and logs in from 127.0.0.1, many times per server:
  // the account throttles stay out of the way unless a test sets them.
  env.emplace("MAILASSAY_LIMITS_SIGNUP_IP_PER_HOUR", "0");
  env.emplace("MAILASSAY_LIMITS_LOGIN_IP_PER_MINUTE", "0");
  env.emplace("MAILASSAY_LIMITS_LOGIN_ACCOUNT_PER_HOUR", "0");
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string temp_dir(const std::string& tag) {
  static std::mt19937_64 rng{std::random_device{}()};
  auto dir = std::filesystem::temp_directory_path() /
             ("mailassay-" + tag + "-" + std::to_string(::getpid()) + "-" +
              std::to_string(rng() % 1000000000));
  std::filesystem::create_directories(dir);
  return dir.string();
}

server_process::server_process(std::map<std::string, std::string> env,
                               std::vector<std::string> args) {
  dir_ = temp_dir("server");
  env.emplace("MAILASSAY_HTTP_ADDRESS", "127.0.0.1");
  env.emplace("MAILASSAY_AUTH_JWT_SECRET_FILE", dir_ + "/jwt.secret");
  env.emplace("MAILASSAY_WEBHOOKS_SECRET_KEY_FILE", dir_ + "/webhooks.key");
  env.emplace("MAILASSAY_CONTROL_SOCKET", dir_ + "/control.sock");
  if (auto* url = std::getenv("MAILASSAY_TEST_HTTP_DB_URL"))
    env.emplace("MAILASSAY_DATABASE_URL", url);
  else
    env.emplace("MAILASSAY_DATABASE_URL", "sqlite://" + dir_ + "/test.db");
  env.emplace("MAILASSAY_LOG_LEVEL", "warn");
  test_environment(env);
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_port();
    env["MAILASSAY_HTTP_PORT"] = std::to_string(port_);
    pid_ = spawn(args, env, dir_ + "/server.log");
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
      if (!running())
        break;
      if (http_request(port_, "GET", "/health").status != 0)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    stop();
  }
  throw std::runtime_error("mailassay serve did not start; log:\n" + log());
}

server_process::~server_process() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool server_process::running() {
  if (pid_ <= 0)
    return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int server_process::stop() {
  if (pid_ <= 0)
    return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 400; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

void server_process::kill_hard() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string server_process::log() const {
  std::ifstream in{dir_ + "/server.log"};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run_binary(const std::vector<std::string>& args,
               std::map<std::string, std::string> env, std::string& output) {
  test_environment(env);
  auto dir = temp_dir("run");
  auto file = dir + "/out.log";
  auto pid = spawn(args, env, file);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream in{file};
  std::stringstream ss;
  ss << in.rdbuf();
  output = ss.str();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_binary_within(std::chrono::milliseconds limit,
                      const std::vector<std::string>& args,
                      std::map<std::string, std::string> env,
                      std::string& output) {
  test_environment(env);
  auto dir = temp_dir("run");
  auto file = dir + "/out.log";
  auto pid = spawn(args, env, file);
  int status = 0;
  bool ended = false;
  auto deadline = std::chrono::steady_clock::now() + limit;
  // Polled: waitpid has no timeout, and the limit only has to catch a
  // hang, not time the exit.
  while (!(ended = ::waitpid(pid, &status, WNOHANG) == pid) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  std::ifstream in{file};
  std::stringstream ss;
  ss << in.rdbuf();
  output = ss.str();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!ended)
    return -2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace mailassay::testing
